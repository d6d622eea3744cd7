package dev.onceonly.rabbitmq;

import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;

/**
 * What the connector does with a delivery the application did not accept, decided from the
 * failure alone (DESIGN.md, "Outcomes → broker actions").
 *
 * @param action   the broker action
 * @param outcome  the guard's outcome; {@link Outcome#FAILED} for any exception that is not a
 *                 {@link MessageRefusedException} (including consumers without the guard)
 * @param reason   why, for the dead-letter headers and logs; never the message body
 * @param consumer the guard's consumer name when the refusal names one, else {@code null}
 * @param keyDigest the guard's key digest when known, else empty
 */
record Disposition(Action action, Outcome outcome, String reason, String consumer, String keyDigest) {

    /** Broker actions for a delivery that was not acked. */
    enum Action {
        /** Hold the delivery for the retry delay, then requeue it; not an attempt. */
        REQUEUE_LATER,
        /** Hold the delivery for the retry delay, then deliver it again as the next attempt. */
        RETRY_LATER,
        /** Publish it to the dead-letter exchange with reason headers, then ack it. */
        DEAD_LETTER
    }

    private static final int MAX_REASON = 300;

    /**
     * @param failure     what the consumer method threw (as handed to {@code Message.nack})
     * @param attempt     1-based number of this delivery's attempt
     * @param maxAttempts attempts allowed before a failing message is dead-lettered
     */
    static Disposition of(Throwable failure, int attempt, int maxAttempts) {
        MessageRefusedException refused = refusal(failure);
        if (refused != null) {
            Action action = switch (refused.outcome()) {
                case BUSY, RETRY -> Action.REQUEUE_LATER;
                case CONFLICT, REJECTED -> Action.DEAD_LETTER;
                // Not a refusal outcome: treat like a failed handler rather than lose the message.
                default -> attempt >= maxAttempts ? Action.DEAD_LETTER : Action.RETRY_LATER;
            };
            return new Disposition(action, refused.outcome(), cap(refused.reason()), refused.consumer(), refused.keyDigest());
        }
        Action action = attempt >= maxAttempts ? Action.DEAD_LETTER : Action.RETRY_LATER;
        return new Disposition(action, Outcome.FAILED, cap(describe(failure)), null, "");
    }

    /** The guard's refusal anywhere in the cause chain: Reactive Messaging may wrap what the method threw. */
    private static MessageRefusedException refusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof MessageRefusedException r) {
                return r;
            }
        }
        return null;
    }

    /** The innermost cause: wrappers (invocation, processing exceptions) say nothing about the message. */
    private static String describe(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.getClass().getName() : root.getClass().getName() + ": " + root.getMessage();
    }

    private static String cap(String s) {
        return s.length() <= MAX_REASON ? s : s.substring(0, MAX_REASON) + "...";
    }
}
