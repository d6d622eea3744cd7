package dev.onceonly.api;

import java.util.Optional;

/**
 * The guard's key for the message a guarded handler is processing, to pass on to the services the
 * handler calls. A handler killed after an HTTP call and before its commit runs again, and the call
 * happens twice unless the service deduplicates: sending this key as {@link #HEADER} lets it. The
 * key is the same for every delivery of the message, on every instance, and reveals nothing of the
 * message (the application's {@code onceonly.key-prefix}, the consumer name and a 128-bit digest).
 * The prefix makes it the application's own: two applications with a consumer of the same name send
 * different keys for the same message, as long as their prefixes differ.
 *
 * <p>Inject it ({@code @Inject IdempotencyContext idempotency}); outside a guarded handler
 * {@link #key()} is empty. With MicroProfile Rest Client or the Jakarta REST client, register
 * {@code dev.onceonly.http.IdempotencyKeyFilter}; with the JDK's {@code HttpClient}, use
 * {@code dev.onceonly.http.IdempotencyKeyHeader}.
 */
public interface IdempotencyContext {

    /** The conventional request header for it (IETF draft "The Idempotency-Key HTTP Header Field"). */
    String HEADER = "Idempotency-Key";

    /**
     * {@return {@code <prefix><consumer>:<digest>} of the guarded handler running on this thread, if
     * any: the key it has in the claim store and the ledger, e.g. {@code oo:orders:5p1raYkHwZfXWINPMxREsQ}}
     */
    Optional<String> key();
}
