package dev.onceonly.spi;

/**
 * A claim the guard took for a delivery before its guarded method was invoked for it (with the
 * claim of a delivery before it, {@link Dispatch#claimAheadWith}), held by the delivery's
 * {@link Dispatch} until the guard uses it.
 *
 * <p>The connector that asked for it calls {@link #abandon} when it settles the delivery (ack,
 * requeue, dead-letter, a channel that closed): a claim the guard used is then untouched, one it
 * never got to is released, so a redelivery elsewhere does not wait for its lease to end.
 */
public interface AheadClaim {

    /**
     * Releases the claim unless the guard used it. Idempotent; never throws (a claim that cannot be
     * released runs out with its lease).
     */
    void abandon();
}
