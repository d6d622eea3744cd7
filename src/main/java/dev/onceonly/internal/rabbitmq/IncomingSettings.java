package dev.onceonly.internal.rabbitmq;

import java.time.Duration;
import java.util.List;

/**
 * Validated settings of one incoming channel (see {@link ChannelProperties} for property names and
 * defaults).
 *
 * @param exchange           exchange the queue is bound to when declaring topology; empty: none
 * @param routingKeys        binding keys of the queue on {@code exchange}
 * @param channel            Reactive Messaging's name of the channel ({@code orders$2} for a concurrency copy)
 * @param prefetch           unacknowledged deliveries, delayed retries included
 * @param deadLetterRoutingKey routing key dead-lettered messages are published with
 * @param maxAttempts        deliveries of a failing message before it is dead-lettered
 * @param backoff            when a FAILED delivery is tried again, and whether the broker holds it meanwhile
 * @param drainTimeout       how long shutdown waits for deliveries being processed
 * @param confirmTimeout     how long a dead-letter or retry publish waits for the broker's confirm
 * @param declare            whether the connector declares exchanges, queues and bindings
 * @param deliveryLimit      quorum queues: the broker's {@code x-delivery-limit}, at least {@code maxAttempts}
 * @param copySigningKey     the key retry copies are signed with (at least 32 bytes); {@code null} only in the
 *                           command-line tools, which sign nothing
 * @param copySigningPreviousKeys keys a retry copy may also be signed with (accepted, never used to sign); may be empty
 * @param queueArguments     optional queue arguments (single active consumer, message TTL, length limit)
 * @param claimAhead         how many buffered deliveries the guard claims in one round trip before they are
 *                           handed over ({@code claim-ahead}); 0 or 1: each message is claimed in its turn
 * @param batch              the batches the method is handed ({@code batch}, {@code batch-size}, {@code batch-linger}),
 *                           or {@code null}: one delivery per call
 */
record IncomingSettings(String channel, ConnectionSettings connection, String queue, QueueType queueType,
                        String exchange, String exchangeType, List<String> routingKeys, int prefetch,
                        String deadLetterExchange, String deadLetterExchangeType, String deadLetterQueue,
                        String deadLetterRoutingKey, int maxAttempts, RetryBackoff backoff, Duration drainTimeout,
                        Duration confirmTimeout, boolean declare, PayloadType payloadType, int deliveryLimit,
                        String copySigningKey, List<String> copySigningPreviousKeys, QueueArguments queueArguments,
                        int claimAhead, Batching batch) {

    /**
     * How deliveries are gathered into batches.
     *
     * @param size   the most deliveries in one batch
     * @param linger how long a partial batch waits for more
     */
    record Batching(int size, Duration linger) {
    }

    /** How long a BUSY or RETRY delivery is held before it goes back: {@code retry-delay}, not backed off. */
    Duration retryDelay() {
        return backoff.first();
    }

    @Override
    public String toString() {
        // The record's own toString would print the signing keys.
        return "IncomingSettings[channel=" + channel + ", queue=" + queue + ", " + connection.describe() + "]";
    }
}
