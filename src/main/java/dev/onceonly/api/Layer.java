package dev.onceonly.api;

/** Which protection layer made a decision (e.g. which one caught a duplicate). */
public enum Layer {
    /** The claim store (Redis, or the in-memory store in development). */
    CLAIM_STORE,
    /** The transactional {@code ProcessedMessage} ledger. */
    LEDGER,
    /** Neither: the decision came from the message or the handler itself. */
    NONE
}
