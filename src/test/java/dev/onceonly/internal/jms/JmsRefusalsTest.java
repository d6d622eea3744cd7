package dev.onceonly.internal.jms;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.testing.LogCapture;
import jakarta.jms.TextMessage;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A guarded JMS listener's BUSY, RETRY and handler failures roll back without an exception reaching
 * the container (which logs it as an error with its incidents): the listener's transaction is marked
 * rollback-only and the listener returns. Without a transaction to mark, they are thrown as before.
 */
class JmsRefusalsTest {

    /** The listener's transaction as the container's registry shows it: in one or not, and whether marked. */
    private static final class Transaction implements JmsRefusals.ListenerTransaction {
        final boolean active;
        int marked;

        Transaction(boolean active) {
            this.active = active;
        }

        @Override
        public boolean rollbackOnly() {
            return marked > 0;
        }

        @Override
        public boolean markRollbackOnly() {
            if (active) {
                marked++;
            }
            return active;
        }
    }

    private final List<Duration> held = new ArrayList<>();

    private JmsRefusals refusals(Transaction tx) {
        return new JmsRefusals(Duration.ofMillis(250), null, null, tx, held::add);
    }

    /** A received text message, delivered for the {@code count}th time. */
    private static JmsMessageView delivery(int count) {
        Map<String, Object> props = Map.of("JMSXDeliveryCount", count);
        TextMessage m = (TextMessage) Proxy.newProxyInstance(JmsRefusalsTest.class.getClassLoader(), new Class<?>[] {TextMessage.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getJMSMessageID" -> "ID:1";
                    case "getText" -> "{\"id\":\"o-1\",\"card\":\"4111\"}";
                    case "getPropertyNames" -> Collections.enumeration(props.keySet());
                    case "propertyExists" -> props.containsKey((String) args[0]);
                    case "getObjectProperty" -> props.get((String) args[0]);
                    case "getIntProperty" -> ((Number) props.get((String) args[0])).intValue();
                    default -> null;
                });
        return JmsMessageView.of(m);
    }

    private static GuardEvent failed(String key) {
        return new GuardEvent("jms-orders", Outcome.FAILED, Layer.NONE, key, "handler failed", 0);
    }

    @Test
    void busyAndRetryAreHeldThenRolledBackWithoutAnException() {
        Transaction tx = new Transaction(true);
        for (Outcome outcome : new Outcome[] {Outcome.BUSY, Outcome.RETRY}) {
            refusals(tx).settle(delivery(1), new MessageRefusedException(outcome, "jms-orders", "k", "another holder", null));
        }
        assertEquals(2, tx.marked, "each transaction marked rollback-only: the provider redelivers");
        assertEquals(List.of(Duration.ofMillis(250), Duration.ofMillis(250)), held);
    }

    @Test
    void withoutATransactionToMarkARefusalIsThrownAsBefore() {
        MessageRefusedException busy = new MessageRefusedException(Outcome.BUSY, "jms-orders", "k", "another holder", null);
        assertSame(busy, assertThrows(MessageRefusedException.class, () -> refusals(new Transaction(false)).settle(delivery(1), busy)));
    }

    /**
     * One line per failed delivery, the exception's class only (its message may quote the body), the
     * stack trace with the first failure of a message; another message gets its own trace.
     */
    @Test
    void aHandlerFailureRollsBackInOneLinePerDeliveryWithTheTraceOncePerMessage() throws Exception {
        Transaction tx = new Transaction(true);
        JmsRefusals refusals = refusals(tx);
        try (LogCapture log = new LogCapture()) {
            refusals.failed(delivery(1), failed("k1"), new RuntimeException(new IllegalStateException("card 4111 declined")));
            refusals.failed(delivery(2), failed("k1"), new IllegalStateException("card 4111 declined"));
            refusals.failed(delivery(1), failed("k2"), new IllegalStateException("card 4111 declined"));

            assertEquals(3, tx.marked);
            List<String> lines = log.lines("ONCE0704W");
            assertEquals(3, lines.size(), log.lines().toString());
            assertEquals("ONCE0704W: Handler of consumer 'jms-orders' failed on delivery 1 (key k1): java.lang.IllegalStateException; "
                    + "rolled back for the provider's redelivery", lines.get(0));
            assertTrue(lines.get(1).contains("failed on delivery 2 (key k1)"), lines.get(1));
            assertEquals(List.of(lines.get(0), lines.get(2)), log.traced(), "the trace once per message");
            assertTrue(log.lines().stream().noneMatch(l -> l.contains("4111")), log.lines().toString());
        }
    }

    @Test
    void withoutATransactionToMarkAFailureIsThrownAsBefore() {
        IllegalStateException boom = new IllegalStateException("boom");
        try (LogCapture log = new LogCapture()) {
            assertSame(boom, assertThrows(IllegalStateException.class,
                    () -> refusals(new Transaction(false)).failed(delivery(1), failed("k"), boom)));
            assertEquals(List.of(), log.lines("ONCE0704W"), "the container reports what it is thrown");
        }
    }
}
