package dev.onceonly.api;

/**
 * Takes the claim store out of service and puts it back, for this application only. Inject it
 * ({@code @Inject ClaimStoreControl control}).
 *
 * <p>While suspended, the guard does not ask the store for new claims: each new message is handled
 * as if the store were unreachable, by its consumer's store-failure policy, at once and without a
 * warning per message — {@link StoreFailurePolicy#LEDGER_ONLY}: the ledger alone guards it;
 * {@link StoreFailurePolicy#REJECT} (or a consumer without the ledger): {@link Outcome#RETRY}.
 * Messages that already hold a claim finish with the store as usual. Uses: a planned Redis
 * failover or upgrade without a connection timeout on every message, and rehearsing an outage.
 *
 * <p>Thread-safe; suspending twice or resuming a running store changes nothing. Not persistent: a
 * restart resumes the store.
 */
public interface ClaimStoreControl {

    /** Stops taking new claims until {@link #resume()}; logged once ({@code ONCE0011W}). */
    void suspend();

    /** Takes new claims again; logged once ({@code ONCE0012I}) when it was suspended. */
    void resume();

    /** {@return whether the claim store is suspended} */
    boolean suspended();
}
