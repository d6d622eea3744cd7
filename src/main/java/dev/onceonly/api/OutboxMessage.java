package dev.onceonly.api;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A message for the {@link Outbox}: where it goes (exchange and routing key), its body and the AMQP
 * properties it is published with. Immutable; the {@code with…} methods return copies.
 *
 * <p>Header values are {@link String}, {@link Long}, {@link Integer} or {@link Boolean}: they are
 * stored in the outbox table as JSON and must come back as they went in.
 *
 * @param exchange      the exchange to publish to ({@code ""} for the default exchange)
 * @param routingKey    the routing key
 * @param body          the body, published as it is
 * @param contentType   the AMQP content type, or {@code null}
 * @param messageId     the AMQP message id, or {@code null} for the outbox to choose it (see
 *                      {@link Outbox#send})
 * @param correlationId the AMQP correlation id, or {@code null}
 * @param persistent    whether the broker writes it to disk (delivery mode 2)
 * @param headers       the AMQP headers
 */
public record OutboxMessage(String exchange, String routingKey, byte[] body, String contentType, String messageId,
                            String correlationId, boolean persistent, Map<String, Object> headers) {

    /** Longest exchange name or routing key AMQP 0-9-1 allows (a short string). */
    private static final int MAX_NAME = 255;

    /**
     * Checks and copies.
     *
     * @param exchange      the exchange ({@code ""} for the default exchange)
     * @param routingKey    the routing key
     * @param body          the body
     * @param contentType   the AMQP content type, or {@code null}
     * @param messageId     the AMQP message id, or {@code null}
     * @param correlationId the AMQP correlation id, or {@code null}
     * @param persistent    whether the broker writes it to disk
     * @param headers       the AMQP headers, or {@code null} for none
     * @throws IllegalArgumentException for a missing exchange or routing key, a name longer than 255
     *                                  characters, or a header value of another type than those listed
     */
    public OutboxMessage {
        Objects.requireNonNull(exchange, "exchange");
        Objects.requireNonNull(routingKey, "routingKey");
        Objects.requireNonNull(body, "body");
        if (exchange.length() > MAX_NAME || routingKey.length() > MAX_NAME) {
            throw new IllegalArgumentException("exchange and routing key are at most " + MAX_NAME + " characters");
        }
        Map<String, Object> copy = new LinkedHashMap<>();
        (headers == null ? Map.<String, Object>of() : headers).forEach((name, value) -> {
            if (!(value instanceof String || value instanceof Long || value instanceof Integer || value instanceof Boolean)) {
                throw new IllegalArgumentException("header '" + name + "' is a "
                        + (value == null ? "null" : value.getClass().getName()) + "; the outbox keeps String, Long, Integer and Boolean");
            }
            copy.put(name, value);
        });
        body = body.clone();
        headers = Collections.unmodifiableMap(copy);
    }

    /**
     * A persistent message with a binary body.
     *
     * @param exchange   the exchange ({@code ""} for the default exchange)
     * @param routingKey the routing key
     * @param body       the body
     * @return the message, {@code application/octet-stream}
     */
    public static OutboxMessage of(String exchange, String routingKey, byte[] body) {
        return new OutboxMessage(exchange, routingKey, body, "application/octet-stream", null, null, true, Map.of());
    }

    /**
     * A persistent message with a text body (UTF-8).
     *
     * @param exchange   the exchange ({@code ""} for the default exchange)
     * @param routingKey the routing key
     * @param text       the body
     * @return the message, {@code text/plain; charset=utf-8}
     */
    public static OutboxMessage text(String exchange, String routingKey, String text) {
        return new OutboxMessage(exchange, routingKey, text.getBytes(StandardCharsets.UTF_8), "text/plain; charset=utf-8",
                null, null, true, Map.of());
    }

    /**
     * @param type the AMQP content type
     * @return a copy with this content type
     */
    public OutboxMessage withContentType(String type) {
        return new OutboxMessage(exchange, routingKey, body, type, messageId, correlationId, persistent, headers);
    }

    /**
     * @param id the AMQP message id, replacing the one the outbox would derive
     * @return a copy with this message id
     */
    public OutboxMessage withMessageId(String id) {
        return new OutboxMessage(exchange, routingKey, body, contentType, id, correlationId, persistent, headers);
    }

    /**
     * @param id the AMQP correlation id
     * @return a copy with this correlation id
     */
    public OutboxMessage withCorrelationId(String id) {
        return new OutboxMessage(exchange, routingKey, body, contentType, messageId, id, persistent, headers);
    }

    /**
     * @param durable whether the broker writes the message to disk
     * @return a copy with this delivery mode
     */
    public OutboxMessage withPersistent(boolean durable) {
        return new OutboxMessage(exchange, routingKey, body, contentType, messageId, correlationId, durable, headers);
    }

    /**
     * @param name  the header's name
     * @param value a {@link String}, {@link Long}, {@link Integer} or {@link Boolean}
     * @return a copy with this header added (or replaced)
     */
    public OutboxMessage withHeader(String name, Object value) {
        Map<String, Object> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new OutboxMessage(exchange, routingKey, body, contentType, messageId, correlationId, persistent, more);
    }

    /** {@return a copy of the body} */
    @Override
    public byte[] body() {
        return body.clone();
    }

    /** Names the destination and the size, never the body. */
    @Override
    public String toString() {
        return "OutboxMessage[exchange=" + exchange + ", routingKey=" + routingKey + ", " + body.length + " bytes, messageId="
                + messageId + "]";
    }
}
