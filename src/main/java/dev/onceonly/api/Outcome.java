package dev.onceonly.api;

/**
 * What the guard decided for one message. Each outcome maps to one broker action.
 */
public enum Outcome {
    /** The handler ran and its transaction committed. Broker: ack. */
    PROCESSED,
    /** Processed before (found in the claim store or the ledger); handler skipped. Broker: ack. */
    DUPLICATE,
    /** Another holder is working on this key right now; handler skipped. Broker: requeue after a delay. */
    BUSY,
    /** The handler threw or its transaction rolled back; the claim was released. Broker: requeue with delay, dead-letter after max attempts. */
    FAILED,
    /** The guard could not decide safely (store down under REJECT, ledger row not committed). Broker: requeue with delay. */
    RETRY,
    /**
     * The key was processed before with a different body (or, with the consumer's
     * {@code conflict-fields}, other values there). Broker: dead-letter with reason.
     */
    CONFLICT,
    /** No key can be derived from the message. Broker: dead-letter with reason. */
    REJECTED;

    /**
     * {@return whether the guard refused the message without running the handler and the message is
     * not done: BUSY, RETRY, CONFLICT or REJECTED (what {@link MessageRefusedException} carries)}
     */
    public boolean isRefusal() {
        return this == BUSY || this == RETRY || isPermanent();
    }

    /** {@return whether the message can never succeed as it is and belongs in the dead-letter queue at once} */
    public boolean isPermanent() {
        return this == CONFLICT || this == REJECTED;
    }
}
