package dev.onceonly.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.LongString;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.support.Utf8;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the broker said about one delivery of an incoming channel. Consumer methods receive it as a
 * parameter next to the payload ({@code void on(String body, IncomingRabbitMetadata meta)}) or from
 * a {@code Message} ({@code message.getMetadata(IncomingRabbitMetadata.class)} or
 * {@code message.unwrap(IncomingRabbitMetadata.class)}). It is the {@link MessageView} the guard
 * derives keys from.
 *
 * <p>A message the connector delivers again as a counted retry (classic queues) is a copy it
 * published to the queue; {@link #exchange()} and {@link #routingKey()} still report where the
 * original was published, so the message keeps its content key across attempts.
 */
public final class IncomingRabbitMetadata implements MessageView {

    private final String channel;
    private final String queue;
    private final String exchange;
    private final String routingKey;
    private final boolean redelivered;
    private final long deliveryTag;
    private final AMQP.BasicProperties properties;
    private final Map<String, Object> headers;
    private final byte[] body;
    private final int attempt;

    /**
     * Made by the connector for each delivery; public so a test can make one.
     *
     * @param channel     the Reactive Messaging channel that received it
     * @param queue       the queue it was consumed from
     * @param exchange    the exchange it was published to ({@code ""} for the default exchange)
     * @param routingKey  the routing key it was published with
     * @param redelivered the broker's redelivered flag
     * @param deliveryTag the broker's delivery tag on the consuming channel
     * @param properties  its AMQP properties, headers included
     * @param body        its body, not copied
     * @param attempt     which attempt this delivery is, from 1
     */
    public IncomingRabbitMetadata(String channel, String queue, String exchange, String routingKey, boolean redelivered,
                           long deliveryTag, AMQP.BasicProperties properties, byte[] body, int attempt) {
        this.channel = channel;
        this.queue = queue;
        this.exchange = exchange;
        this.routingKey = routingKey;
        this.redelivered = redelivered;
        this.deliveryTag = deliveryTag;
        this.properties = properties;
        this.headers = readableHeaders(properties.getHeaders());
        this.body = body;
        this.attempt = attempt;
    }

    /** {@return the name of the Reactive Messaging channel that received it} */
    public String channel() {
        return channel;
    }

    /** {@return the queue it was consumed from} */
    public String queue() {
        return queue;
    }

    /** Exchange the message was originally published to; empty for the default exchange. */
    @Override
    public String exchange() {
        return exchange;
    }

    /** Routing key the message was originally published with. */
    @Override
    public String routingKey() {
        return routingKey;
    }

    /** The AMQP {@code message-id}, or {@code null}. */
    @Override
    public String messageId() {
        return properties.getMessageId();
    }

    /**
     * Whether this message may have been delivered before: the broker's redelivered flag, or a
     * retry the connector made ({@link #attempt()} above 1).
     *
     * @return whether it may have been delivered before
     */
    public boolean redelivered() {
        return redelivered || attempt > 1;
    }

    /** {@return the broker's delivery tag on its AMQP channel} It changes with every redelivery. */
    public long deliveryTag() {
        return deliveryTag;
    }

    /**
     * Application headers, read-only. AMQP long strings are given as {@link String} when they are
     * valid UTF-8, else as their exact {@code byte[]}; other values as amqp-client decodes them
     * (Integer, Long, Boolean, Date, List, Map, byte[]...).
     */
    @Override
    public Map<String, Object> headers() {
        return headers;
    }

    /** The body exactly as delivered. Do not modify it. */
    @Override
    public byte[] body() {
        return body;
    }

    /** {@return all AMQP properties (content type, correlation id, timestamp, priority...)} */
    public AMQP.BasicProperties properties() {
        return properties;
    }

    /** {@return the {@code content-type} property, or {@code null}} */
    public String contentType() {
        return properties.getContentType();
    }

    /** {@return the {@code correlation-id} property, or {@code null}} */
    public String correlationId() {
        return properties.getCorrelationId();
    }

    /**
     * 1-based number of this attempt: failed deliveries before it plus one, counted by the broker
     * ({@code x-delivery-count}, quorum queues) and by the connector's own retry header.
     *
     * @return the attempt number, 1 for the first delivery
     */
    public int attempt() {
        return attempt;
    }

    @Override
    public String toString() {
        // Never the body or header values: they may hold personal data.
        return "IncomingRabbitMetadata[channel=" + channel + ", queue=" + queue + ", exchange=" + exchange
                + ", routingKey=" + routingKey + ", messageId=" + messageId() + ", deliveryTag=" + deliveryTag
                + ", attempt=" + attempt + "]";
    }

    private static Object text(LongString s) {
        String text = Utf8.strict(s.getBytes());
        return text != null ? text : s.getBytes();
    }

    private static Map<String, Object> readableHeaders(Map<String, Object> raw) {
        if (raw == null || raw.isEmpty()) {
            return Map.of();
        }
        Map<String, Object> copy = new LinkedHashMap<>();
        // LinkedHashMap rather than Map.copyOf: AMQP header values may be null (void field values).
        // A long string becomes text when it is valid UTF-8, else stays bytes: its toString() would
        // decode with replacement, and different bytes would read (and key) the same.
        raw.forEach((k, v) -> copy.put(k, v instanceof LongString s ? text(s) : v));
        return Collections.unmodifiableMap(copy);
    }
}
