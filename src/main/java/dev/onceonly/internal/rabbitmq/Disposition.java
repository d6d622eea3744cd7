package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Outcome;

/**
 * What the connector does with a delivery once the application acked or nacked it, decided from the
 * guard's decision for that delivery (when a guarded method was invoked for it) and the attempt count
 * (docs/architecture.md, "Outcomes and broker actions"). A FAILED decision that is not
 * {@linkplain GuardEvent#retryable() retryable} is dead-lettered at once, whatever the attempt.
 *
 * @param action    the broker action
 * @param outcome   for an ack, the guard's PROCESSED or DUPLICATE (PROCESSED when no guard decided);
 *                  else the guard's refusal ({@code BUSY}, {@code RETRY}, {@code CONFLICT},
 *                  {@code REJECTED}), or {@link Outcome#FAILED} (the handler, or anything after the guard, failed)
 * @param reason    why, for the dead-letter headers and logs; never the message body. For FAILED:
 *                  the innermost cause's class and message, and for a failure not retried the
 *                  guard's reason after it in parentheses (the classes its retry rule matched)
 * @param consumer  the guard's consumer name when a guarded method decided, else {@code null}
 * @param keyDigest the guard's key digest when known, else empty
 */
record Disposition(Action action, Outcome outcome, String reason, String consumer, String keyDigest) {

    /** Broker actions for a delivery. */
    enum Action {
        /** Ack it: processed, or a duplicate skipped. */
        ACK,
        /** Hold the delivery for the retry delay, then requeue it; not an attempt. */
        REQUEUE_LATER,
        /** Hold the delivery for the retry delay, then deliver it again as the next attempt. */
        RETRY_LATER,
        /** Publish it to the dead-letter exchange with reason headers, then ack it. */
        DEAD_LETTER
    }

    private static final int MAX_REASON = 300;

    /**
     * The application acked the delivery: an ack, unless its guarded method returned quietly after a
     * refusal, which is settled as the refusal says.
     *
     * @param guard       the guard's decision for this delivery, or {@code null} when no guarded
     *                    method was invoked for it
     * @param attempt     1-based number of this delivery's attempt
     * @param maxAttempts attempts allowed before a failing message is dead-lettered
     */
    static Disposition accepted(GuardEvent guard, int attempt, int maxAttempts) {
        if (guard != null && guard.outcome().isRefusal()) {
            return of(guard, null, attempt, maxAttempts);
        }
        return guard == null ? new Disposition(Action.ACK, Outcome.PROCESSED, "", null, "")
                : new Disposition(Action.ACK, guard.outcome(), "", guard.consumer(), guard.keyDigest());
    }

    /**
     * The application nacked the delivery.
     *
     * @param guard       the guard's decision for this delivery, or {@code null} when no guarded
     *                    method was invoked for it
     * @param failure     what the application nacked with
     * @param attempt     1-based number of this delivery's attempt
     * @param maxAttempts attempts allowed before a failing message is dead-lettered
     */
    static Disposition of(GuardEvent guard, Throwable failure, int attempt, int maxAttempts) {
        Action failed = attempt >= maxAttempts ? Action.DEAD_LETTER : Action.RETRY_LATER;
        if (guard == null) {
            return new Disposition(failed, Outcome.FAILED, cap(describe(failure)), null, "");
        }
        return switch (guard.outcome()) {
            case BUSY, RETRY -> new Disposition(Action.REQUEUE_LATER, guard.outcome(), cap(guard.reason()),
                    guard.consumer(), guard.keyDigest());
            case CONFLICT, REJECTED -> new Disposition(Action.DEAD_LETTER, guard.outcome(), cap(guard.reason()),
                    guard.consumer(), guard.keyDigest());
            // The consumer's retry rule says another attempt cannot succeed: dead-lettered at once.
            case FAILED -> guard.retryable()
                    ? new Disposition(failed, Outcome.FAILED, cap(describe(failure)), guard.consumer(), guard.keyDigest())
                    // Capped apart, so a long exception message never cuts off which class was not retried.
                    : new Disposition(Action.DEAD_LETTER, Outcome.FAILED, cap(describe(failure)) + " (" + cap(guard.reason()) + ")",
                            guard.consumer(), guard.keyDigest());
            // The guard let it through and something after it failed: an attempt spent.
            case PROCESSED, DUPLICATE -> new Disposition(failed, Outcome.FAILED, cap(describe(failure)),
                    guard.consumer(), guard.keyDigest());
        };
    }

    /** The innermost cause: wrappers (invocation, processing exceptions) say nothing about the message. */
    private static String describe(Throwable failure) {
        if (failure == null) {
            return "nacked without a reason";
        }
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
