package dev.onceonly.api;

import java.util.Map;

/**
 * The parts of a delivered message the guard reads to derive its key. Connectors expose their
 * per-message metadata through this interface; {@link #of} builds one by hand (tests, REST entry
 * points, other transports).
 */
public interface MessageView {

    /** Exchange the message was published to; empty for the default exchange. Never null. */
    String exchange();

    /** Routing key it was published with; may be empty. Never null. */
    String routingKey();

    /** The AMQP {@code message-id} property, or {@code null} when the publisher set none. */
    String messageId();

    /** Application headers; empty when there are none. Never null. */
    Map<String, Object> headers();

    /** The message body exactly as delivered. Never null. Callers must not modify it. */
    byte[] body();

    /** A plain view over the given parts. {@code null} strings and maps become empty; {@code messageId} stays nullable. */
    static MessageView of(String exchange, String routingKey, String messageId,
                          Map<String, Object> headers, byte[] body) {
        return new SimpleMessageView(exchange == null ? "" : exchange,
                routingKey == null ? "" : routingKey,
                messageId,
                headers == null ? Map.of() : Map.copyOf(headers),
                body == null ? new byte[0] : body);
    }

    /** Value holder behind {@link #of}. */
    record SimpleMessageView(String exchange, String routingKey, String messageId,
                             Map<String, Object> headers, byte[] body) implements MessageView {
    }
}
