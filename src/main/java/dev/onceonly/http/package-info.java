/**
 * The guarded key carried to HTTP calls a handler makes: {@link dev.onceonly.http.IdempotencyKeyHeader}
 * for any client, {@link dev.onceonly.http.IdempotencyKeyFilter} for a Jakarta REST client. Public API.
 */
package dev.onceonly.http;
