package dev.onceonly.rabbitmq;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How to publish one message of an outgoing channel, attached to the message as Reactive Messaging
 * metadata: {@code Message.of(payload).addMetadata(OutgoingRabbitMetadata.builder().routingKey("k").build())}.
 * Every part is optional; unset parts fall back to the channel's configuration.
 */
public final class OutgoingRabbitMetadata {

    private final String exchange;
    private final String routingKey;
    private final String messageId;
    private final String correlationId;
    private final String contentType;
    private final Map<String, Object> headers;
    private final Boolean persistent;
    private final String expiration;
    private final Integer priority;

    private OutgoingRabbitMetadata(Builder b) {
        this.exchange = b.exchange;
        this.routingKey = b.routingKey;
        this.messageId = b.messageId;
        this.correlationId = b.correlationId;
        this.contentType = b.contentType;
        this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
        this.persistent = b.persistent;
        this.expiration = b.expiration;
        this.priority = b.priority;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Exchange to publish to instead of the channel's, or {@code null}. */
    public String exchange() {
        return exchange;
    }

    /** Routing key instead of the channel's, or {@code null}. */
    public String routingKey() {
        return routingKey;
    }

    public String messageId() {
        return messageId;
    }

    public String correlationId() {
        return correlationId;
    }

    /** Content type instead of the one derived from the payload type, or {@code null}. */
    public String contentType() {
        return contentType;
    }

    /** Application headers (read-only). */
    public Map<String, Object> headers() {
        return headers;
    }

    /** Delivery mode instead of the channel's {@code persistent} setting, or {@code null}. */
    public Boolean persistent() {
        return persistent;
    }

    /** Per-message TTL in milliseconds (the AMQP {@code expiration} property), or {@code null}. */
    public String expiration() {
        return expiration;
    }

    public Integer priority() {
        return priority;
    }

    /** Builds {@link OutgoingRabbitMetadata}; not thread-safe. */
    public static final class Builder {
        private String exchange;
        private String routingKey;
        private String messageId;
        private String correlationId;
        private String contentType;
        private final Map<String, Object> headers = new LinkedHashMap<>();
        private Boolean persistent;
        private String expiration;
        private Integer priority;

        private Builder() {
        }

        public Builder exchange(String exchange) {
            this.exchange = exchange;
            return this;
        }

        public Builder routingKey(String routingKey) {
            this.routingKey = routingKey;
            return this;
        }

        public Builder messageId(String messageId) {
            this.messageId = messageId;
            return this;
        }

        public Builder correlationId(String correlationId) {
            this.correlationId = correlationId;
            return this;
        }

        public Builder contentType(String contentType) {
            this.contentType = contentType;
            return this;
        }

        /** Adds a header; values must be types AMQP can encode (String, numbers, Boolean, Date, List, Map, byte[]). */
        public Builder header(String name, Object value) {
            headers.put(name, value);
            return this;
        }

        public Builder persistent(boolean persistent) {
            this.persistent = persistent;
            return this;
        }

        public Builder expirationMillis(long millis) {
            this.expiration = Long.toString(millis);
            return this;
        }

        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        public OutgoingRabbitMetadata build() {
            return new OutgoingRabbitMetadata(this);
        }
    }
}
