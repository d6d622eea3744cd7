package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;

import static dev.onceonly.internal.rabbitmq.Disposition.Action.DEAD_LETTER;
import static dev.onceonly.internal.rabbitmq.Disposition.Action.REQUEUE_LATER;
import static dev.onceonly.internal.rabbitmq.Disposition.Action.RETRY_LATER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DispositionTest {

    private static GuardEvent decided(Outcome outcome) {
        return new GuardEvent("orders", outcome, Layer.CLAIM_STORE, "digest", "because", 1);
    }

    private static final RuntimeException NACKED = new IllegalStateException("refused");

    @Test
    void refusalsFollowTheOutcomeTable() {
        Disposition busy = Disposition.of(decided(Outcome.BUSY), NACKED, 1, 3);
        assertEquals(REQUEUE_LATER, busy.action());
        assertEquals(Outcome.BUSY, busy.outcome(), "not an attempt: the refusal, not FAILED");
        assertEquals("because", busy.reason());
        assertEquals("orders", busy.consumer());
        assertEquals("digest", busy.keyDigest());
        assertEquals(REQUEUE_LATER, Disposition.of(decided(Outcome.RETRY), NACKED, 99, 3).action(), "RETRY never dead-letters");
        assertEquals(DEAD_LETTER, Disposition.of(decided(Outcome.CONFLICT), NACKED, 1, 3).action());
        Disposition rejected = Disposition.of(decided(Outcome.REJECTED), NACKED, 1, 3);
        assertEquals(DEAD_LETTER, rejected.action());
        assertEquals(Outcome.REJECTED, rejected.outcome());
        assertEquals("orders", rejected.consumer());
        assertEquals("digest", rejected.keyDigest());
        assertEquals("because", rejected.reason());
    }

    /** Each dead letter's reason class, for the dead-letter counter: from the outcome and the retry rule's verdict. */
    @Test
    void deadLettersAreClassedByWhy() {
        RuntimeException boom = new IllegalStateException("boom");
        assertEquals(DeadLetterListener.Reason.CONFLICT, Disposition.of(decided(Outcome.CONFLICT), NACKED, 1, 3).deadLetterReason());
        assertEquals(DeadLetterListener.Reason.REJECTED, Disposition.of(decided(Outcome.REJECTED), NACKED, 1, 3).deadLetterReason());
        assertEquals(DeadLetterListener.Reason.MAX_ATTEMPTS, Disposition.of(null, boom, 3, 3).deadLetterReason());
        assertEquals(DeadLetterListener.Reason.MAX_ATTEMPTS, Disposition.of(
                new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "digest", "handler failed", 1, true), boom, 3, 3).deadLetterReason());
        Disposition notRetried = Disposition.of(new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "digest",
                "not retried: java.lang.IllegalStateException matches no-retry-for java.lang.IllegalStateException", 1, false), boom, 1, 3);
        assertEquals(DEAD_LETTER, notRetried.action());
        assertEquals(DeadLetterListener.Reason.NOT_RETRYABLE, notRetried.deadLetterReason());
        assertEquals("unsigned-copy", DeadLetterListener.Reason.UNSIGNED_COPY.tag());
    }

    @Test
    void failuresRetryUntilMaxAttempts() {
        RuntimeException boom = new IllegalStateException("boom");
        assertEquals(RETRY_LATER, Disposition.of(null, boom, 1, 3).action());
        assertEquals(RETRY_LATER, Disposition.of(null, boom, 2, 3).action());
        Disposition last = Disposition.of(null, boom, 3, 3);
        assertEquals(DEAD_LETTER, last.action());
        assertEquals(Outcome.FAILED, last.outcome());
        assertEquals("java.lang.IllegalStateException: boom", last.reason());
        assertNull(last.consumer());
    }

    /** A guarded method that failed: an attempt, named after the guard's consumer and key. */
    @Test
    void aGuardedFailureCountsAsAnAttemptAndNamesTheConsumer() {
        var failure = new RuntimeException("processing failed", new IllegalArgumentException("bad amount"));
        Disposition d = Disposition.of(decided(Outcome.FAILED), failure, 1, 3);
        assertEquals(RETRY_LATER, d.action());
        assertEquals("java.lang.IllegalArgumentException: bad amount", d.reason());
        assertEquals("orders", d.consumer());
        assertEquals("digest", d.keyDigest());
    }

    /** The guard said another attempt cannot succeed: dead-lettered at the first attempt, the class in the reason. */
    @Test
    void aFailureNotWorthRetryingIsDeadLetteredAtOnce() {
        GuardEvent notRetryable = new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "digest",
                "not retried: dev.example.InvalidOrderException is in no-retry-for", 1, false);
        var failure = new RuntimeException(new InvocationTargetException(
                new IllegalArgumentException("quantity must be a whole number, got \"abc\"")));
        Disposition d = Disposition.of(notRetryable, failure, 1, 5);
        assertEquals(DEAD_LETTER, d.action());
        assertEquals(Outcome.FAILED, d.outcome(), "still FAILED in the dead-letter headers");
        assertEquals("java.lang.IllegalArgumentException: quantity must be a whole number, got \"abc\""
                + " (not retried: dev.example.InvalidOrderException is in no-retry-for)", d.reason());
        assertEquals("orders", d.consumer());
        assertEquals("digest", d.keyDigest());

        GuardEvent retryable = new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "digest", "handler failed", 1, true);
        Disposition again = Disposition.of(retryable, failure, 1, 5);
        assertEquals(RETRY_LATER, again.action(), "a retryable failure is retried as before");
        assertEquals("java.lang.IllegalArgumentException: quantity must be a whole number, got \"abc\"", again.reason());
    }

    /** A long exception message never cuts off which class was not retried. */
    @Test
    void theClassNotRetriedStaysInALongReason() {
        GuardEvent notRetryable = new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "digest",
                "not retried: dev.example.InvalidOrderException is in no-retry-for", 1, false);
        Disposition d = Disposition.of(notRetryable, new IllegalArgumentException("x".repeat(1000)), 1, 5);
        assertTrue(d.reason().endsWith("... (not retried: dev.example.InvalidOrderException is in no-retry-for)"), d.reason());
    }

    /**
     * Only the guard's decision for this delivery counts: a refusal thrown by some other guarded
     * call inside an unguarded method is a failure of this delivery, like any exception.
     */
    @Test
    void aRefusalInTheCauseChainIsNotTheDeliverysDecision() {
        var wrapped = new RuntimeException(new InvocationTargetException(
                new dev.onceonly.api.MessageRefusedException(Outcome.BUSY, "inner", "d", "busy", null)));
        Disposition d = Disposition.of(null, wrapped, 1, 3);
        assertEquals(Outcome.FAILED, d.outcome());
        assertEquals(RETRY_LATER, d.action());
    }

    /** The reason goes into a header: at most 300 characters of it, then "...". */
    @Test
    void aReasonIsKeptWholeUpTo300CharactersAndCutAfter() {
        String exact = "x".repeat(300 - "java.lang.IllegalStateException: ".length());
        assertEquals("java.lang.IllegalStateException: " + exact,
                Disposition.of(null, new IllegalStateException(exact), 1, 3).reason());
        String longer = exact + "y";
        assertEquals(("java.lang.IllegalStateException: " + exact) + "...",
                Disposition.of(null, new IllegalStateException(longer), 1, 3).reason());
        GuardEvent busy = new GuardEvent("orders", Outcome.BUSY, Layer.CLAIM_STORE, "digest", "b".repeat(400), 1);
        assertEquals("b".repeat(300) + "...", Disposition.of(busy, NACKED, 1, 3).reason());
    }

    @Test
    void aNackWithoutAnExceptionOrMessageStillSaysWhat() {
        assertEquals("nacked without a reason", Disposition.of(null, null, 1, 3).reason());
        assertEquals("java.lang.IllegalStateException", Disposition.of(null, new IllegalStateException(), 1, 3).reason());
    }

    /**
     * The guard let the message through (PROCESSED, or a DUPLICATE it skipped) and the application
     * nacked afterwards: a failure like any other, an attempt spent, under the guard's consumer.
     */
    @Test
    void aNackAfterTheGuardLetTheMessageThroughIsAFailedAttempt() {
        for (Outcome passed : new Outcome[] {Outcome.PROCESSED, Outcome.DUPLICATE}) {
            Disposition first = Disposition.of(decided(passed), NACKED, 1, 3);
            assertEquals(RETRY_LATER, first.action(), passed.name());
            assertEquals(Outcome.FAILED, first.outcome(), passed.name());
            assertEquals("java.lang.IllegalStateException: refused", first.reason(), passed.name());
            assertEquals("orders", first.consumer(), passed.name());
            assertEquals("digest", first.keyDigest(), passed.name());
            assertEquals(DEAD_LETTER, Disposition.of(decided(passed), NACKED, 3, 3).action(), passed.name());
        }
        assertEquals(DEAD_LETTER, Disposition.of(decided(Outcome.FAILED), NACKED, 3, 3).action(),
                "a retryable failure at its last attempt");
    }

    /**
     * Acked after a failure (the guarded method returned so that the runtime logs nothing): settled
     * as a nack with that failure, never acked; only a failure retried to the last attempt carries
     * its trace to the dead letter's line.
     */
    @Test
    void anAckAfterAFailureIsAFailedAttemptNeverAnAck() {
        RuntimeException boom = new IllegalStateException("boom");
        Disposition first = Disposition.accepted(decided(Outcome.FAILED), boom, 1, 3);
        assertEquals(RETRY_LATER, first.action());
        assertEquals("java.lang.IllegalStateException: boom", first.reason());
        assertNull(first.trace());
        Disposition last = Disposition.accepted(decided(Outcome.FAILED), boom, 3, 3);
        assertEquals(DEAD_LETTER, last.action());
        assertSame(boom, last.trace(), "the trace, once, with the dead letter");

        GuardEvent notRetryable = new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "digest",
                "not retried: java.lang.IllegalArgumentException is in no-retry-for", 1, false);
        Disposition invalid = Disposition.accepted(notRetryable, new IllegalArgumentException("bad: 4111"), 1, 3);
        assertEquals(DEAD_LETTER, invalid.action());
        assertNull(invalid.trace(), "an expected outcome: no trace");
        assertEquals("java.lang.IllegalArgumentException (not retried: java.lang.IllegalArgumentException is in no-retry-for)",
                invalid.loggedReason(), "the class and the rule, not the message");

        assertNull(Disposition.of(decided(Outcome.FAILED), boom, 3, 3).trace(), "a nack's failure was logged by whoever nacked");
        assertEquals(Disposition.Action.ACK, Disposition.accepted(decided(Outcome.PROCESSED), null, 1, 3).action());
        assertEquals(Disposition.Action.ACK, Disposition.accepted(null, null, 3, 3).action());
    }

    @Test
    void aLoggedReasonNamesTheFailuresClassOnly() {
        assertEquals("java.lang.IllegalStateException", Disposition.of(null, new IllegalStateException("card 4111: declined"), 3, 3).loggedReason());
        assertEquals("java.lang.IllegalStateException", Disposition.of(null, new IllegalStateException(), 3, 3).loggedReason());
        GuardEvent notRetryable = new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "digest",
                "not retried: java.lang.IllegalStateException is in no-retry-for", 1, false);
        assertEquals("java.lang.IllegalStateException (not retried: java.lang.IllegalStateException is in no-retry-for)",
                Disposition.of(notRetryable, new IllegalStateException(), 1, 3).loggedReason(), "no message, and a colon only in the rule");
        assertEquals("because", Disposition.of(decided(Outcome.CONFLICT), NACKED, 1, 3).loggedReason(), "a refusal's reason as it is");
    }
}
