package dev.onceonly.api;

/**
 * Reported once per guarded message, after its outcome is final (for {@link Outcome#PROCESSED}
 * and {@link Outcome#FAILED}: after the transaction completed). Delivered as a synchronous CDI
 * event, so applications can count outcomes with {@code @Observes GuardEvent}.
 *
 * @param consumer   consumer name the message was guarded for
 * @param outcome    the decision
 * @param layer      the layer that decided ({@link Layer#CLAIM_STORE} or {@link Layer#LEDGER} for
 *                   duplicates, busy and conflicts; {@link Layer#NONE} otherwise)
 * @param keyDigest  short, non-reversible digest of the message key, safe to log
 * @param reason     human-readable reason for refusals and failures; empty otherwise. Never holds
 *                   the body, nor an exception's message: for a failure that is not retried, the
 *                   class names the retry rule matched
 * @param guardNanos time the guard itself spent (claim, ledger, finalisation), handler excluded
 * @param retryable  whether delivering the message again may succeed: {@code false} for
 *                   {@link Outcome#CONFLICT}, {@link Outcome#REJECTED} and a {@link Outcome#FAILED}
 *                   whose exception the consumer's retry rule says is not worth retrying
 *                   ({@code no-retry-for}, docs/consumers.md, "Which failures are retried"); {@code true} for every other
 *                   decision. A connector dead-letters a FAILED message that is not retryable at
 *                   once instead of trying it again
 */
public record GuardEvent(String consumer, Outcome outcome, Layer layer, String keyDigest,
                         String reason, long guardNanos, boolean retryable) {

    /**
     * An event whose retryability follows from its outcome alone: {@code false} exactly for the
     * {@linkplain Outcome#isPermanent() permanent} outcomes. For callers that report no failure
     * classification (tests, other connectors' fakes).
     *
     * @param consumer   consumer name the message was guarded for
     * @param outcome    the decision
     * @param layer      the layer that decided
     * @param keyDigest  short digest of the message key
     * @param reason     human-readable reason, never the body
     * @param guardNanos time the guard itself spent
     */
    public GuardEvent(String consumer, Outcome outcome, Layer layer, String keyDigest, String reason, long guardNanos) {
        this(consumer, outcome, layer, keyDigest, reason, guardNanos, !outcome.isPermanent());
    }
}
