package dev.onceonly.api;

/**
 * Thrown by a guarded method instead of running it when the guard refused the message:
 * {@link Outcome#BUSY}, {@link Outcome#RETRY}, {@link Outcome#CONFLICT} or {@link Outcome#REJECTED}.
 * Also {@link Outcome#DUPLICATE} when the ledger found the message inside a transaction of the
 * caller's own (a guarded method called within a transaction): the failed ledger insert has
 * spoiled that transaction, which is marked rollback-only, so the call cannot return as skipped.
 * Connectors read {@link #outcome()} to choose the broker action (requeue later or dead-letter).
 */
public class MessageRefusedException extends OnceOnlyException {

    private final Outcome outcome;
    private final String consumer;
    private final String keyDigest;
    private final String reason;

    public MessageRefusedException(Outcome outcome, String consumer, String keyDigest, String reason, Throwable cause) {
        super(outcome + " for consumer '" + consumer + "' (key " + (keyDigest.isEmpty() ? "-" : keyDigest) + "): " + reason, cause);
        this.outcome = outcome;
        this.consumer = consumer;
        this.keyDigest = keyDigest;
        this.reason = reason;
    }

    public Outcome outcome() {
        return outcome;
    }

    public String consumer() {
        return consumer;
    }

    /** Short digest of the key, safe to log; empty when no key could be derived. */
    public String keyDigest() {
        return keyDigest;
    }

    public String reason() {
        return reason;
    }
}
