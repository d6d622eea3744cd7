package dev.onceonly.internal.jms;

import dev.onceonly.api.MessageView;
import dev.onceonly.api.OnceOnlyException;
import jakarta.jms.BytesMessage;
import jakarta.jms.Destination;
import jakarta.jms.JMSException;
import jakarta.jms.MapMessage;
import jakarta.jms.Message;
import jakarta.jms.MessageEOFException;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.StreamMessage;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the guard reads of a received Jakarta Messaging message: its destination's name as the
 * {@link #exchange()}, no routing key, the provider's {@code JMSMessageID} as the
 * {@link #messageId()} (new for every send: it stops redeliveries, not a producer's resends; use a
 * property or the body for those), its properties as {@link #headers()} (with
 * {@code JMSXDeliveryCount}), and its body as bytes:
 * <ul>
 *   <li>{@code TextMessage}: the text in UTF-8;</li>
 *   <li>{@code BytesMessage}: the bytes (the message is reset afterwards, so the listener reads
 *       them all again);</li>
 *   <li>{@code MapMessage}: the entries sorted by name, and {@code StreamMessage}: its values in
 *       order (reset afterwards), each in Java serialization (equal contents give equal bytes: the
 *       values are the provider's primitives and strings, never an object it deserialized);</li>
 *   <li>{@code ObjectMessage}: none. Its object is never deserialized here: Java deserialization of
 *       whatever a producer sent, before the application chose to, runs any gadget chain on the
 *       class path. {@link #body()} throws instead, so a key strategy and a conflict policy that need
 *       no body (the message id or a property, with {@code conflict=ignore}) work, and one that needs
 *       it refuses the message ({@code REJECTED}) with the reason;</li>
 *   <li>a message without a body: no bytes.</li>
 * </ul>
 * Built once per delivery; immutable afterwards.
 */
public final class JmsMessageView implements MessageView {

    private final String destination;
    private final String messageId;
    private final Map<String, Object> headers;
    /** {@code null} for an {@code ObjectMessage}. */
    private final byte[] body;
    private final int deliveryCount;
    private final Message message;

    /** Why an {@code ObjectMessage}'s body is not read, and what works instead. */
    static final String OBJECT_MESSAGE = "the body of a JMS ObjectMessage is never deserialized: key it by "
            + "message-id or a property, with conflict=ignore, or send a BytesMessage or TextMessage";

    private JmsMessageView(Message message) throws JMSException, IOException {
        this.message = message;
        this.destination = name(message.getJMSDestination());
        this.messageId = message.getJMSMessageID();
        Map<String, Object> props = new LinkedHashMap<>();
        for (Object name : Collections.list(message.getPropertyNames())) {
            props.put((String) name, message.getObjectProperty((String) name));
        }
        // Mandatory since JMS 2.0, but not always listed among the property names.
        int count = message.propertyExists("JMSXDeliveryCount") ? message.getIntProperty("JMSXDeliveryCount") : 1;
        this.deliveryCount = Math.max(1, count);
        props.put("JMSXDeliveryCount", deliveryCount);
        this.headers = Collections.unmodifiableMap(props);
        this.body = bodyOf(message);
    }

    /**
     * Reads a received message.
     *
     * @param message the message the listener was given
     * @return its view
     * @throws OnceOnlyException when the provider fails to give its parts (never with the body)
     */
    public static JmsMessageView of(Message message) {
        try {
            return new JmsMessageView(message);
        } catch (JMSException | IOException e) {
            throw new OnceOnlyException("cannot read the received JMS message (" + e.getClass().getName() + ")", e);
        }
    }

    /** {@return the name of the destination the message was received from; empty when the provider gives none} */
    @Override
    public String exchange() {
        return destination;
    }

    /** {@return always empty: a JMS destination has no routing key} */
    @Override
    public String routingKey() {
        return "";
    }

    @Override
    public String messageId() {
        return messageId;
    }

    @Override
    public Map<String, Object> headers() {
        return headers;
    }

    /**
     * @throws UnsupportedOperationException for an {@code ObjectMessage}, whose object is never deserialized here
     */
    @Override
    public byte[] body() {
        if (body == null) {
            throw new UnsupportedOperationException(OBJECT_MESSAGE);
        }
        return body;
    }


    /** {@return this delivery's number: 1 for the first, from {@code JMSXDeliveryCount}} */
    public int attempt() {
        return deliveryCount;
    }

    /** {@return the message the listener received} */
    public Message message() {
        return message;
    }

    private static String name(Destination d) throws JMSException {
        if (d instanceof Queue q) {
            return q.getQueueName();
        }
        if (d instanceof Topic t) {
            return t.getTopicName();
        }
        return d == null ? "" : d.toString();
    }

    private static byte[] bodyOf(Message m) throws JMSException, IOException {
        if (m instanceof TextMessage t) {
            String text = t.getText();
            return text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        }
        if (m instanceof BytesMessage b) {
            byte[] bytes = new byte[(int) b.getBodyLength()];
            b.readBytes(bytes);
            b.reset(); // the listener reads the body after the guard
            return bytes;
        }
        if (m instanceof MapMessage map) {
            TreeMap<String, Object> sorted = new TreeMap<>();
            for (Object name : Collections.list(map.getMapNames())) {
                sorted.put((String) name, map.getObject((String) name));
            }
            return serialized(sorted);
        }
        if (m instanceof ObjectMessage) {
            return null; // never getObject(): see the class
        }
        if (m instanceof StreamMessage s) {
            ArrayList<Object> values = new ArrayList<>();
            try {
                while (true) {
                    values.add(s.readObject());
                }
            } catch (MessageEOFException end) {
                s.reset(); // the listener reads the values after the guard
            }
            return serialized(values);
        }
        return new byte[0];
    }

    private static byte[] serialized(Serializable value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(value);
        }
        return bytes.toByteArray();
    }
}
