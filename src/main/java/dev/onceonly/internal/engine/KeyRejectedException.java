package dev.onceonly.internal.engine;

import dev.onceonly.api.OnceOnlyException;

/** No key can be derived from a message; the engine turns this into {@code REJECTED}. The reason never quotes the body. */
public class KeyRejectedException extends OnceOnlyException {

    /**
     * A message without a key.
     *
     * @param reason why no key could be derived, without quoting the body
     */
    public KeyRejectedException(String reason) {
        super(reason);
    }
}
