package dev.onceonly.api;

/** How the key of a message is derived. Keys are always scoped by consumer. */
public enum KeyStrategy {
    /** Not chosen explicitly: {@link #PARAMETER} when the method has an {@link IdempotencyKey} parameter, else {@link #CONTENT}. */
    DEFAULT,
    /** Exchange, routing key and SHA-256 of the body: redeliveries of the same bytes are duplicates. */
    CONTENT,
    /** The AMQP {@code message-id} property. */
    MESSAGE_ID,
    /** A named message header, e.g. {@code x-idempotency-key}. */
    HEADER,
    /** A JSON Pointer into a JSON payload, e.g. {@code /orderId}. */
    JSON_POINTER,
    /** The method parameter annotated with {@link IdempotencyKey}. */
    PARAMETER;

    /** {@return the configuration spelling: lower case with dashes ({@code message-id})} */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}
