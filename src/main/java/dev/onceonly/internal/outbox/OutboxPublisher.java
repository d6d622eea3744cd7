package dev.onceonly.internal.outbox;

import java.util.concurrent.CompletableFuture;

/**
 * Publishes outbox rows to the broker (the RabbitMQ connector implements it).
 */
public interface OutboxPublisher {

    /**
     * Publishes one row's message with its message id, mandatory and with publisher confirms.
     *
     * @param record the row
     * @return completed when the broker confirmed it; failed with {@link Refused} when the broker
     *         refused this message (nack, unroutable), or with any other exception when the broker
     *         could not be asked (not connected, connection lost, no confirm in time): only a
     *         refusal counts against the row
     */
    CompletableFuture<Void> publish(OutboxRecord record);

    /** {@return whether publishing can be tried now (connected)} */
    boolean connected();

    /** The broker refused one message: the message's fault, not the connection's. */
    final class Refused extends RuntimeException {

        /**
         * @param reason what the broker said, never the body
         */
        public Refused(String reason) {
            super(reason, null, false, false);
        }
    }
}
