package dev.onceonly.internal.jms;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.engine.KeyRejectedException;
import dev.onceonly.internal.engine.MessageKey;
import dev.onceonly.testing.Settings;
import jakarta.jms.ObjectMessage;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serial;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An {@code ObjectMessage}'s body is never deserialized by the guard: Java deserialization of what
 * any producer sent, before the application sees it, is how a gadget chain runs. A key that needs no
 * body works on one; a key or a comparison that needs the body refuses it with the reason.
 */
class JmsMessageViewTest {

    /** Counts its own deserializations: a gadget would run where {@code readObject} does. */
    static final class Tripwire implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
        static final AtomicInteger READ = new AtomicInteger();

        @Serial
        private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
            READ.incrementAndGet();
            in.defaultReadObject();
        }
    }

    private final KeyDeriver keys = new KeyDeriver("oo:");

    @BeforeEach
    void reset() {
        Tripwire.READ.set(0);
    }

    /** An ObjectMessage as a provider gives it: the serialized bytes, deserialized on {@code getObject}. */
    private static ObjectMessage objectMessage(String id) {
        byte[] serialized = serialize(new Tripwire());
        Map<String, Object> props = Map.of("JMSXDeliveryCount", 1);
        return (ObjectMessage) Proxy.newProxyInstance(JmsMessageViewTest.class.getClassLoader(), new Class<?>[] {ObjectMessage.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getJMSMessageID" -> id;
                    case "getObject" -> new ObjectInputStream(new ByteArrayInputStream(serialized)).readObject();
                    case "getBody" -> new ObjectInputStream(new ByteArrayInputStream(serialized)).readObject();
                    case "getPropertyNames" -> Collections.enumeration(props.keySet());
                    case "propertyExists" -> props.containsKey((String) args[0]);
                    case "getObjectProperty" -> props.get((String) args[0]);
                    case "getIntProperty" -> ((Number) props.get((String) args[0])).intValue();
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> null;
                });
    }

    private static byte[] serialize(Serializable o) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(o);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    @Test
    void readingAnObjectMessageNeverDeserializesIt() {
        JmsMessageView view = JmsMessageView.of(objectMessage("ID:1"));

        assertEquals(0, Tripwire.READ.get(), "the received object was deserialized by the guard");
        assertEquals("ID:1", view.messageId());
        assertThrows(UnsupportedOperationException.class, view::body);
        assertEquals(0, Tripwire.READ.get(), "the received object was deserialized by the guard");
    }

    @Test
    void aKeyThatNeedsNoBodyWorksOnAnObjectMessage() {
        ConsumerSettings byId = Settings.withConflict(Settings.defaults("orders", KeyStrategy.MESSAGE_ID), ConflictPolicy.IGNORE);

        MessageKey one = keys.derive(byId, JmsMessageView.of(objectMessage("ID:1")), null);
        MessageKey two = keys.derive(byId, JmsMessageView.of(objectMessage("ID:2")), null);

        assertNotEquals(one.storeKey(), two.storeKey());
        assertEquals(0, Tripwire.READ.get(), "the received object was deserialized by the guard");
    }

    @Test
    void aKeyOrAComparisonThatNeedsTheBodyRefusesAnObjectMessageWithTheReason() {
        ConsumerSettings content = Settings.defaults("orders", KeyStrategy.CONTENT);
        ConsumerSettings byIdComparingBodies = Settings.withConflict(Settings.defaults("orders", KeyStrategy.MESSAGE_ID), ConflictPolicy.STRICT);
        ConsumerSettings byPointer = Settings.withKey(content, KeyStrategy.JSON_POINTER, false, "/id");
        ConsumerSettings byIdComparingFields = Settings.withConflict(Settings.defaults("orders", KeyStrategy.MESSAGE_ID),
                ConflictPolicy.STRICT, "/amount");
        for (ConsumerSettings s : new ConsumerSettings[] {content, byIdComparingBodies, byPointer, byIdComparingFields}) {
            KeyRejectedException refused = assertThrows(KeyRejectedException.class,
                    () -> keys.derive(s, JmsMessageView.of(objectMessage("ID:1")), null), s.keyStrategy() + " " + s.conflict());
            assertTrue(refused.getMessage().contains("ObjectMessage"), refused.getMessage());
        }
        assertEquals(0, Tripwire.READ.get(), "the received object was deserialized by the guard");
    }

    /**
     * A refused ObjectMessage is not copied to the dead-letter queue (the copy would need its object):
     * it is rolled back, and the provider's redelivery limit moves the original as it is.
     */
    @Test
    void aRefusedObjectMessageIsLeftToTheProviderNotCopied() {
        jakarta.jms.ConnectionFactory factory = (jakarta.jms.ConnectionFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {jakarta.jms.ConnectionFactory.class}, (proxy, method, args) -> {
                    throw new AssertionError("copied to the dead-letter queue: " + method.getName());
                });
        jakarta.jms.Queue dlq = (jakarta.jms.Queue) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {jakarta.jms.Queue.class},
                (proxy, method, args) -> "orders.dlq");
        JmsRefusals refusals = new JmsRefusals(java.time.Duration.ofMillis(1), factory, dlq, new JmsRefusals.ListenerTransaction() {
            @Override
            public boolean rollbackOnly() {
                return false;
            }

            @Override
            public boolean markRollbackOnly() {
                return true;
            }
        }, delay -> { });
        dev.onceonly.api.MessageRefusedException refused = new dev.onceonly.api.MessageRefusedException(dev.onceonly.api.Outcome.REJECTED,
                "jms-orders", "", JmsMessageView.OBJECT_MESSAGE, null);

        assertSame(refused, assertThrows(dev.onceonly.api.MessageRefusedException.class,
                () -> refusals.settle(JmsMessageView.of(objectMessage("ID:1")), refused)));
        assertEquals(0, Tripwire.READ.get(), "the received object was deserialized by the guard");
    }
}
