package dev.onceonly.internal.rabbitmq;

import java.util.List;
import java.util.Locale;

/**
 * Told of each message the connector dead-lettered (metrics), once the broker confirmed the dead
 * letter. Beans of this type are the connector's listeners: observability contributes them, so the
 * connector never names a metrics API. Called on the connector's threads: implementations must be
 * quick and must not throw.
 */
public interface DeadLetterListener {

    /** Listens to nothing. */
    DeadLetterListener NONE = (channel, reason) -> { };

    /** Why a message was dead-lettered: a few classes, never the reason's text. */
    enum Reason {
        /** A failure at the last of {@code max-attempts}, retried until then. */
        MAX_ATTEMPTS,
        /** A failure the consumer's retry rule says another attempt cannot mend, at its first attempt. */
        NOT_RETRYABLE,
        /** The guard's CONFLICT: the key was processed with another body. */
        CONFLICT,
        /** The guard's REJECTED: no key could be derived from the message. */
        REJECTED,
        /** A retry copy without the connector's signature: never handed to the application. */
        UNSIGNED_COPY;

        /** {@return the tag value: the name in lower case, words joined by {@code -}} */
        public String tag() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /**
     * A message left {@code channel}'s queue for its dead-letter exchange.
     *
     * @param channel the incoming channel
     * @param reason  why
     */
    void deadLettered(String channel, Reason reason);

    /**
     * {@return one listener telling each of {@code listeners}, or {@link #NONE} when there is none}
     *
     * @param listeners the listeners, {@link #NONE} left out by the caller
     */
    static DeadLetterListener all(List<DeadLetterListener> listeners) {
        List<DeadLetterListener> copy = List.copyOf(listeners);
        return copy.isEmpty() ? NONE : (channel, reason) -> copy.forEach(l -> l.deadLettered(channel, reason));
    }
}
