package dev.onceonly.api;

/** What the guard does when the claim store cannot be reached. */
public enum StoreFailurePolicy {
    /** Go on without a claim: the transactional ledger alone guards the message. Needs the ledger. */
    LEDGER_ONLY,
    /** Refuse the message with {@link Outcome#RETRY}; the broker redelivers it later. */
    REJECT
}
