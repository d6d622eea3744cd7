package dev.onceonly.rabbitmq;

import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;

import static dev.onceonly.rabbitmq.Disposition.Action.DEAD_LETTER;
import static dev.onceonly.rabbitmq.Disposition.Action.REQUEUE_LATER;
import static dev.onceonly.rabbitmq.Disposition.Action.RETRY_LATER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class DispositionTest {

    private static MessageRefusedException refused(Outcome outcome) {
        return new MessageRefusedException(outcome, "orders", "digest", "because", null);
    }

    @Test
    void refusalsFollowTheOutcomeTable() {
        assertEquals(REQUEUE_LATER, Disposition.of(refused(Outcome.BUSY), 1, 3).action());
        assertEquals(REQUEUE_LATER, Disposition.of(refused(Outcome.RETRY), 99, 3).action(), "RETRY never dead-letters");
        assertEquals(DEAD_LETTER, Disposition.of(refused(Outcome.CONFLICT), 1, 3).action());
        Disposition rejected = Disposition.of(refused(Outcome.REJECTED), 1, 3);
        assertEquals(DEAD_LETTER, rejected.action());
        assertEquals(Outcome.REJECTED, rejected.outcome());
        assertEquals("orders", rejected.consumer());
        assertEquals("digest", rejected.keyDigest());
        assertEquals("because", rejected.reason());
    }

    @Test
    void failuresRetryUntilMaxAttempts() {
        RuntimeException boom = new IllegalStateException("boom");
        assertEquals(RETRY_LATER, Disposition.of(boom, 1, 3).action());
        assertEquals(RETRY_LATER, Disposition.of(boom, 2, 3).action());
        Disposition last = Disposition.of(boom, 3, 3);
        assertEquals(DEAD_LETTER, last.action());
        assertEquals(Outcome.FAILED, last.outcome());
        assertEquals("java.lang.IllegalStateException: boom", last.reason());
        assertNull(last.consumer());
    }

    @Test
    void wrappedRefusalsAndFailuresAreUnwrapped() {
        var wrapped = new RuntimeException(new InvocationTargetException(refused(Outcome.CONFLICT)));
        assertEquals(Outcome.CONFLICT, Disposition.of(wrapped, 1, 3).outcome());
        var failure = new RuntimeException("processing failed", new IllegalArgumentException("bad amount"));
        assertEquals("java.lang.IllegalArgumentException: bad amount", Disposition.of(failure, 1, 3).reason());
    }
}
