/**
 * Dead-letter operations in plain Java: list, inspect, replay and discard a channel's dead letters
 * ({@link dev.onceonly.api.DeadLetterQueue}) over a {@link dev.onceonly.internal.deadletter.DeadLetterAccess}
 * the connector implements on the broker, and the guard's decisions on replays as the connector
 * reports them ({@link dev.onceonly.internal.deadletter.ReplayWatch}).
 */
package dev.onceonly.internal.deadletter;
