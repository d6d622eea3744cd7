package dev.onceonly.rabbitmq;

/** The RabbitMQ queue type of an incoming channel; it decides who counts delivery attempts. */
enum QueueType {
    /** No broker-side delivery count: the connector carries the count in the message itself. */
    CLASSIC,
    /** The broker counts returned deliveries in the {@code x-delivery-count} header. */
    QUORUM;

    /** Whether a plain requeue is counted by the broker (so a retry need not republish). */
    boolean brokerCountsDeliveries() {
        return this == QUORUM;
    }
}
