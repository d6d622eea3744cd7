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

    /** {@return a builder with every part unset} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the exchange to publish to instead of the channel's, or {@code null}} */
    public String exchange() {
        return exchange;
    }

    /** {@return the routing key instead of the channel's, or {@code null}} */
    public String routingKey() {
        return routingKey;
    }

    /** {@return the AMQP {@code message-id} property, or {@code null} for none} */
    public String messageId() {
        return messageId;
    }

    /** {@return the AMQP {@code correlation-id} property, or {@code null} for none} */
    public String correlationId() {
        return correlationId;
    }

    /** {@return the content type instead of the one derived from the payload type, or {@code null}} */
    public String contentType() {
        return contentType;
    }

    /** {@return the application headers (read-only)} */
    public Map<String, Object> headers() {
        return headers;
    }

    /** {@return the delivery mode instead of the channel's {@code persistent} setting, or {@code null}} */
    public Boolean persistent() {
        return persistent;
    }

    /** {@return the per-message TTL in milliseconds (the AMQP {@code expiration} property), or {@code null}} */
    public String expiration() {
        return expiration;
    }

    /** {@return the AMQP {@code priority} property, or {@code null} for none} */
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

        /**
         * Publishes to another exchange than the channel's.
         *
         * @param exchange the exchange; empty for the default exchange
         * @return this builder
         */
        public Builder exchange(String exchange) {
            this.exchange = exchange;
            return this;
        }

        /**
         * Publishes with another routing key than the channel's.
         *
         * @param routingKey the routing key
         * @return this builder
         */
        public Builder routingKey(String routingKey) {
            this.routingKey = routingKey;
            return this;
        }

        /**
         * Sets the AMQP {@code message-id} property.
         *
         * @param messageId the message id
         * @return this builder
         */
        public Builder messageId(String messageId) {
            this.messageId = messageId;
            return this;
        }

        /**
         * Sets the AMQP {@code correlation-id} property.
         *
         * @param correlationId the correlation id
         * @return this builder
         */
        public Builder correlationId(String correlationId) {
            this.correlationId = correlationId;
            return this;
        }

        /**
         * Sets the content type instead of the one derived from the payload type.
         *
         * @param contentType the content type, e.g. {@code application/json}
         * @return this builder
         */
        public Builder contentType(String contentType) {
            this.contentType = contentType;
            return this;
        }

        /**
         * Adds a header; values must be types AMQP can encode (String, numbers, Boolean, Date, List, Map, byte[]).
         * With tracing, a {@code traceparent} set here is published as set, and the connector adds no
         * trace context of its own (docs/observability.md, "Tracing across the broker").
         *
         * @param name the header name
         * @param value the header value
         * @return this builder
         */
        public Builder header(String name, Object value) {
            headers.put(name, value);
            return this;
        }

        /**
         * Sets the delivery mode instead of the channel's {@code persistent} setting.
         *
         * @param persistent whether the broker writes the message to disk
         * @return this builder
         */
        public Builder persistent(boolean persistent) {
            this.persistent = persistent;
            return this;
        }

        /**
         * Sets a per-message TTL (the AMQP {@code expiration} property).
         *
         * @param millis the TTL in milliseconds
         * @return this builder
         */
        public Builder expirationMillis(long millis) {
            this.expiration = Long.toString(millis);
            return this;
        }

        /**
         * Sets the AMQP {@code priority} property.
         *
         * @param priority the priority, 0 to 255 (the queue's maximum applies)
         * @return this builder
         */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /** {@return the metadata, with the parts set so far} */
        public OutgoingRabbitMetadata build() {
            return new OutgoingRabbitMetadata(this);
        }
    }
}
