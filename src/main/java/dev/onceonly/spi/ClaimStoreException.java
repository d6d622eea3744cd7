package dev.onceonly.spi;

import dev.onceonly.api.OnceOnlyException;

/** The claim store could not answer (unreachable, timed out, protocol error). Never carries key material beyond its digest. */
public class ClaimStoreException extends OnceOnlyException {

    private final String store;
    private final String operation;

    public ClaimStoreException(String store, String operation, Throwable cause) {
        super("Claim store '" + store + "' failed during " + operation + ": " + cause, cause);
        this.store = store;
        this.operation = operation;
    }

    public String store() {
        return store;
    }

    public String operation() {
        return operation;
    }
}
