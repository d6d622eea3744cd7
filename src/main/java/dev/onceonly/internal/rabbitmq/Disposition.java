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
 * @param trace     the failure whose stack trace the dead letter's log line carries, or {@code null}:
 *                  set only for a failure retried to the last attempt that nobody else logged (the
 *                  guarded method returned instead of throwing it), so each message's trace is logged once
 */
record Disposition(Action action, Outcome outcome, String reason, String consumer, String keyDigest, Throwable trace) {

    /** A disposition whose log line carries no stack trace. */
    Disposition(Action action, Outcome outcome, String reason, String consumer, String keyDigest) {
        this(action, outcome, reason, consumer, keyDigest, null);
    }

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
    /** Where the retry rule's part of a FAILED reason starts: {@link #of} appends it last, in parentheses. */
    private static final String NOT_RETRIED = " (not retried";

    /**
     * The application acked the delivery: an ack, unless its guarded method returned quietly after a
     * refusal or a failure ({@link Delivery#settlesFromDecision}), which is settled as a nack with
     * that failure would be: a refusal as it says, a failure retried or dead-lettered. Such a failure
     * reached nobody else, so its dead letter after the last attempt carries its stack trace.
     *
     * @param guard       the guard's decision for this delivery, or {@code null} when no guarded
     *                    method was invoked for it
     * @param failure     what the guarded call threw for a {@code FAILED} decision, else {@code null}
     * @param attempt     1-based number of this delivery's attempt
     * @param maxAttempts attempts allowed before a failing message is dead-lettered
     */
    static Disposition accepted(GuardEvent guard, Throwable failure, int attempt, int maxAttempts) {
        if (guard != null && guard.outcome().isRefusal()) {
            return of(guard, null, attempt, maxAttempts);
        }
        if (guard != null && guard.outcome() == Outcome.FAILED) {
            Disposition d = of(guard, failure, attempt, maxAttempts);
            // Not worth retrying is an expected outcome (an invalid message): its line, no trace.
            return d.action() == Action.DEAD_LETTER && guard.retryable() && failure != null
                    ? new Disposition(d.action(), d.outcome(), d.reason(), d.consumer(), d.keyDigest(), failure) : d;
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

    /**
     * {@return the reason as a log line may show it: for FAILED the exception's class only (its
     * message may quote the body), with what the retry rule matched}
     */
    String loggedReason() {
        if (outcome != Outcome.FAILED) {
            return reason;
        }
        // "<class>[: <message>][ (<retry rule's reason>)]", the rule's part appended last by of().
        int rule = reason.lastIndexOf(NOT_RETRIED);
        String failure = rule < 0 ? reason : reason.substring(0, rule);
        int colon = failure.indexOf(':');
        return (colon < 0 ? failure : failure.substring(0, colon)) + (rule < 0 ? "" : reason.substring(rule));
    }

    /**
     * {@return the class of this dead letter's reason, for the dead-letter counter: a FAILED one not
     * retried by the retry rule, or retried to the last attempt}
     */
    DeadLetterListener.Reason deadLetterReason() {
        return switch (outcome) {
            case CONFLICT -> DeadLetterListener.Reason.CONFLICT;
            case REJECTED -> DeadLetterListener.Reason.REJECTED;
            default -> reason.contains(NOT_RETRIED) ? DeadLetterListener.Reason.NOT_RETRYABLE : DeadLetterListener.Reason.MAX_ATTEMPTS;
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
