package dev.onceonly.api;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The guard's key for the message a guarded handler is processing, to pass on to the services the
 * handler calls. A handler killed after an HTTP call and before its commit runs again, and the call
 * happens twice unless the service deduplicates: sending this key as {@link #HEADER} lets it. The
 * key is the same for every delivery of the message, on every instance, and reveals nothing of the
 * message (the application's {@code onceonly.key-prefix}, the consumer name and a 128-bit digest).
 * The prefix makes it the application's own: two applications with a consumer of the same name send
 * different keys for the same message, as long as their prefixes differ.
 *
 * <p>A key stops a <em>repeated</em> call, not a <em>late</em> one: a handler paused past its lease
 * (a long GC, a frozen VM) may still call after another instance took the message over and called.
 * {@link #fence()} orders them: sent as {@link #FENCE_HEADER}, it lets the service refuse a call
 * whose fence is not above the highest it has seen for the key (see {@code docs/fencing.md}).
 *
 * <p>Inject it ({@code @Inject IdempotencyContext idempotency}); outside a guarded handler
 * {@link #key()} and {@link #fence()} are empty. With MicroProfile Rest Client or the Jakarta REST client, register
 * {@code dev.onceonly.http.IdempotencyKeyFilter}; with the JDK's {@code HttpClient}, use
 * {@code dev.onceonly.http.IdempotencyKeyHeader}.
 */
public interface IdempotencyContext {

    /** The conventional request header for it (IETF draft "The Idempotency-Key HTTP Header Field"). */
    String HEADER = "Idempotency-Key";

    /** The request header for {@link #fence()}, sent beside {@link #HEADER}: the fence in decimal. */
    String FENCE_HEADER = "Idempotency-Fence";

    /**
     * {@return {@code <prefix><consumer>:<digest>} of the guarded handler running on this thread, if
     * any: the key it has in the claim store and the ledger, e.g. {@code oo:orders:5p1raYkHwZfXWINPMxREsQ}}
     */
    Optional<String> key();

    /**
     * {@return the fencing token of the running guarded handler's claim: a positive number greater
     * than that of every earlier claim of the same key, on any instance, so a service that refuses a
     * fence at or below the highest it has seen for the key refuses the late call of a holder that
     * was paused past its lease. Empty outside a guarded handler, for a handler that runs without a
     * claim (the claim store unavailable under {@code store-failure=ledger-only}), and with a store
     * that gives no fences (Redis's native claim: see {@code onceonly.fencing})}
     */
    OptionalLong fence();
}
