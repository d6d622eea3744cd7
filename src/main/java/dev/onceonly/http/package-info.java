/**
 * HTTP: the guarded key carried to HTTP calls a handler makes ({@link dev.onceonly.http.IdempotencyKeyHeader}
 * for any client, {@link dev.onceonly.http.IdempotencyKeyFilter} for a Jakarta REST client), and the
 * dead-letter operations as a Jakarta REST resource an application mounts under its own role
 * ({@link dev.onceonly.http.DeadLetterResource}). Public API.
 */
package dev.onceonly.http;
