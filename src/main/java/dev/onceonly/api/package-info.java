/**
 * What an application writes against: {@link dev.onceonly.api.IdempotentMessage} on a consumer,
 * {@link dev.onceonly.api.IdempotencyContext} inside it, {@link dev.onceonly.api.Outbox} for the
 * messages it sends, and the outcomes it can observe ({@link dev.onceonly.api.GuardEvent},
 * {@link dev.onceonly.api.Outcome}). Compatible across minor versions.
 */
package dev.onceonly.api;
