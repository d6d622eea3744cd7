package dev.onceonly.internal.rabbitmq;

/** The RabbitMQ queue type of an incoming channel. */
enum QueueType {
    /** A plain requeue counts nothing. */
    CLASSIC,
    /**
     * The broker counts every return of a delivery in {@code x-delivery-count} (a requeue too) and,
     * from RabbitMQ 4.0 on, drops or dead-letters a message past its delivery limit: a requeue is
     * an attempt here, so BUSY and RETRY come back as copies instead.
     */
    QUORUM;

    /** Whether a plain requeue raises the broker's delivery count. */
    boolean requeueCounts() {
        return this == QUORUM;
    }
}
