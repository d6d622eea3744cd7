package dev.onceonly.simulation;

import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSProducer;
import jakarta.jms.JMSRuntimeException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.TextMessage;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The smallest part of the Jakarta Messaging API the guard's JMS code uses, over {@link SimJms}:
 * text messages with properties (read by the real {@code JmsMessageView}), queues, and a connection
 * factory whose contexts send (for the real {@code JmsRefusals}' dead-letter moves). Proxies that
 * implement exactly the calls that code makes: any other call fails the run, so a new use of the
 * API is noticed here first.
 */
final class SimJmsApi {

    private SimJmsApi() {
    }

    /** A text message: its id, destination, text and properties (mutable until it is sent). */
    static final class Data implements InvocationHandler {
        final String messageId;
        final Queue destination;
        final String text;
        final Map<String, Object> properties = new LinkedHashMap<>();

        Data(String messageId, Queue destination, String text, Map<String, Object> properties) {
            this.messageId = messageId;
            this.destination = destination;
            this.text = text;
            this.properties.putAll(properties);
        }

        @Override
        public Object invoke(Object proxy, Method m, Object[] a) {
            return switch (m.getName()) {
                case "getJMSMessageID" -> messageId;
                case "getJMSDestination" -> destination;
                case "getText" -> text;
                case "getPropertyNames" -> Collections.enumeration(properties.keySet());
                case "propertyExists" -> properties.containsKey((String) a[0]);
                case "getObjectProperty" -> properties.get((String) a[0]);
                case "getIntProperty" -> ((Number) properties.get((String) a[0])).intValue();
                case "getJMSCorrelationID", "getJMSType" -> null;
                case "setObjectProperty", "setStringProperty", "setIntProperty" -> {
                    properties.put((String) a[0], a[1]);
                    yield null;
                }
                case "toString" -> "message " + messageId;
                default -> throw new UnsupportedOperationException("the simulation's JMS message does not implement " + m.getName());
            };
        }
    }

    static TextMessage message(Data data) {
        return (TextMessage) Proxy.newProxyInstance(SimJmsApi.class.getClassLoader(), new Class<?>[] {TextMessage.class}, data);
    }

    static Data data(Message m) {
        return (Data) Proxy.getInvocationHandler(m);
    }

    static Queue queue(String name) {
        return (Queue) Proxy.newProxyInstance(SimJmsApi.class.getClassLoader(), new Class<?>[] {Queue.class}, (p, m, a) -> switch (m.getName()) {
            case "getQueueName", "toString" -> name;
            default -> throw new UnsupportedOperationException("the simulation's queue does not implement " + m.getName());
        });
    }

    /**
     * A connection factory whose producers hand what they send to {@code sent} (the provider, inside
     * the caller's transaction), unless {@code fails} says this send fails.
     */
    static ConnectionFactory factory(BooleanSupplier fails, Consumer<Message> sent) {
        return (ConnectionFactory) Proxy.newProxyInstance(SimJmsApi.class.getClassLoader(), new Class<?>[] {ConnectionFactory.class},
                (p, m, a) -> switch (m.getName()) {
                    case "createContext" -> context(fails, sent);
                    default -> throw new UnsupportedOperationException("the simulation's connection factory does not implement " + m.getName());
                });
    }

    private static JMSContext context(BooleanSupplier fails, Consumer<Message> sent) {
        JMSProducer producer = (JMSProducer) Proxy.newProxyInstance(SimJmsApi.class.getClassLoader(), new Class<?>[] {JMSProducer.class},
                (p, m, a) -> switch (m.getName()) {
                    case "send" -> {
                        if (fails.getAsBoolean()) {
                            throw new JMSRuntimeException("send failed (simulated)");
                        }
                        sent.accept((Message) a[1]);
                        yield p;
                    }
                    default -> throw new UnsupportedOperationException("the simulation's producer does not implement " + m.getName());
                });
        return (JMSContext) Proxy.newProxyInstance(SimJmsApi.class.getClassLoader(), new Class<?>[] {JMSContext.class},
                (p, m, a) -> switch (m.getName()) {
                    case "createProducer" -> producer;
                    case "createTextMessage" -> message(new Data(null, null, (String) a[0], Map.of()));
                    case "close" -> null;
                    default -> throw new UnsupportedOperationException("the simulation's JMS context does not implement " + m.getName());
                });
    }
}
