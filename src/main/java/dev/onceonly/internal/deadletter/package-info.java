/**
 * Dead-letter operations in plain Java: list, inspect, replay and discard a channel's dead letters
 * ({@link dev.onceonly.api.DeadLetterQueue}) over a {@link dev.onceonly.internal.deadletter.DeadLetterAccess}
 * the connector implements on the broker, which also brings back the guard's decisions on replays.
 */
package dev.onceonly.internal.deadletter;
