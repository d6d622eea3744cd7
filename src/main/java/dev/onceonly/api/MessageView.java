package dev.onceonly.api;

import java.util.Map;

/**
 * The parts of a delivered message the guard reads to derive its key. Connectors expose their
 * per-message metadata through this interface; {@link #of} builds one by hand (tests, REST entry
 * points, other transports).
 */
public interface MessageView {

    /** {@return the exchange the message was published to; empty for the default exchange} Never null. */
    String exchange();

    /** {@return the routing key it was published with; may be empty} Never null. */
    String routingKey();

    /** {@return the AMQP {@code message-id} property, or {@code null} when the publisher set none} */
    String messageId();

    /** {@return the application headers; empty when there are none} Never null. */
    Map<String, Object> headers();

    /**
     * The body, read by the guard only when the key strategy or the conflict comparison needs it.
     *
     * @return the message body exactly as delivered; never null. Callers must not modify it.
     * @throws UnsupportedOperationException when the transport cannot give the body without an unsafe
     *         read (a JMS {@code ObjectMessage}, which only Java deserialization opens), with the reason:
     *         a key or a comparison that needs the body then refuses the message ({@code REJECTED})
     */
    byte[] body();

    /**
     * A plain view over the given parts. {@code null} strings and maps become empty; {@code messageId} stays nullable.
     *
     * @param exchange the exchange, or {@code null} for the default exchange
     * @param routingKey the routing key, or {@code null}
     * @param messageId the {@code message-id}, or {@code null}
     * @param headers the application headers (copied), or {@code null}
     * @param body the body (not copied), or {@code null} for an empty one
     * @return the view
     */
    static MessageView of(String exchange, String routingKey, String messageId,
                          Map<String, Object> headers, byte[] body) {
        return new SimpleMessageView(exchange == null ? "" : exchange,
                routingKey == null ? "" : routingKey,
                messageId,
                headers == null ? Map.of() : Map.copyOf(headers),
                body == null ? new byte[0] : body);
    }

    /**
     * Value holder behind {@link #of}.
     *
     * @param exchange the exchange; empty for the default exchange
     * @param routingKey the routing key; may be empty
     * @param messageId the {@code message-id}, or {@code null}
     * @param headers the application headers
     * @param body the body
     */
    record SimpleMessageView(String exchange, String routingKey, String messageId,
                             Map<String, Object> headers, byte[] body) implements MessageView {
    }
}
