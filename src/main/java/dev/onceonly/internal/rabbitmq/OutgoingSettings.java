package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.OutgoingRabbitMetadata;

import java.time.Duration;

/**
 * Validated settings of one outgoing channel (see {@link ChannelProperties} for property names and
 * defaults).
 *
 * @param exchange       exchange messages are published to; empty: the default exchange
 * @param routingKey     routing key unless the message's {@link OutgoingRabbitMetadata} names one
 * @param persistent     delivery mode 2 unless the message's metadata says otherwise
 * @param declare        whether the connector declares the exchange
 * @param mandatory      whether a message no queue takes fails its send (else the broker drops it)
 * @param maxInflight    publishes awaiting their confirm at once
 * @param confirmTimeout how long a publish waits for the broker's confirm before it fails
 * @param drainTimeout   how long shutdown waits for outstanding confirms
 */
record OutgoingSettings(String channel, ConnectionSettings connection, String exchange, String exchangeType,
                        String routingKey, boolean persistent, boolean declare, boolean mandatory, int maxInflight,
                        Duration confirmTimeout, Duration drainTimeout) {
}
