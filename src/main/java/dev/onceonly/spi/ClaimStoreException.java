package dev.onceonly.spi;

import dev.onceonly.api.OnceOnlyException;

/** The claim store could not answer (unreachable, timed out, protocol error). Never carries key material beyond its digest. */
public class ClaimStoreException extends OnceOnlyException {

    /** The store's name, as {@link ClaimStore#name()}. */
    private final String store;
    /** The primitive that failed. */
    private final String operation;

    /**
     * A failed store operation.
     *
     * @param store the store's name, as {@link ClaimStore#name()}
     * @param operation the primitive that failed: {@code claim}, {@code complete}, {@code release}, {@code extend}
     * @param cause the client's failure
     */
    public ClaimStoreException(String store, String operation, Throwable cause) {
        super("Claim store '" + store + "' failed during " + operation + ": " + cause, cause);
        this.store = store;
        this.operation = operation;
    }

    /** {@return the store's name, as {@link ClaimStore#name()}} */
    public String store() {
        return store;
    }

    /** {@return the primitive that failed} */
    public String operation() {
        return operation;
    }
}
