/**
 * What the RabbitMQ connector ({@code onceonly-rabbitmq}) shows an application: the metadata of a
 * received message ({@link dev.onceonly.rabbitmq.IncomingRabbitMetadata}), the metadata an outgoing one
 * may carry ({@link dev.onceonly.rabbitmq.OutgoingRabbitMetadata}) and the headers it writes
 * ({@link dev.onceonly.rabbitmq.RabbitHeaders}). Public API; the connector itself is internal.
 */
package dev.onceonly.rabbitmq;
