/**
 * Jakarta Messaging (JMS) listeners under the guard: {@code @IdempotentMessage} on a
 * message-driven bean's {@code onMessage(jakarta.jms.Message)}. {@link dev.onceonly.internal.jms.JmsMessageView}
 * is what the guard reads of a received message; {@link dev.onceonly.internal.jms.JmsRefusals} turns a
 * refusal into what fits the listener's transaction (a rollback for redelivery, or a move to the
 * dead-letter queue). Loaded only by applications that have such listeners.
 */
package dev.onceonly.internal.jms;
