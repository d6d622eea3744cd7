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
 * @param reason     human-readable reason for refusals; empty otherwise. Never holds the body.
 * @param guardNanos time the guard itself spent (claim, ledger, finalisation), handler excluded
 */
public record GuardEvent(String consumer, Outcome outcome, Layer layer, String keyDigest,
                         String reason, long guardNanos) {
}
