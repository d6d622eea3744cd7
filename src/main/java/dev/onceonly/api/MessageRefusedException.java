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

    /** The guard's decision. */
    private final Outcome outcome;
    /** The consumer the message was refused for. */
    private final String consumer;
    /** Short digest of the key; empty when no key could be derived. */
    private final String keyDigest;
    /** Why the message was refused. */
    private final String reason;

    /**
     * A refused message.
     *
     * @param outcome the guard's decision
     * @param consumer the consumer name
     * @param keyDigest short digest of the key, safe to log; empty when no key could be derived
     * @param reason why the message was refused, without the body or the key
     * @param cause the failure behind the refusal, or {@code null}
     */
    public MessageRefusedException(Outcome outcome, String consumer, String keyDigest, String reason, Throwable cause) {
        super(outcome + " for consumer '" + consumer + "' (key " + (keyDigest.isEmpty() ? "-" : keyDigest) + "): " + reason, cause);
        this.outcome = outcome;
        this.consumer = consumer;
        this.keyDigest = keyDigest;
        this.reason = reason;
    }

    /** {@return the guard's decision for the message} */
    public Outcome outcome() {
        return outcome;
    }

    /** {@return the consumer the message was refused for} */
    public String consumer() {
        return consumer;
    }

    /** {@return a short digest of the key, safe to log; empty when no key could be derived} */
    public String keyDigest() {
        return keyDigest;
    }

    /** {@return why the message was refused} */
    public String reason() {
        return reason;
    }
}
