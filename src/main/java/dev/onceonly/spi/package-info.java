/**
 * For those who implement a part: a claim store ({@link dev.onceonly.spi.ClaimStore}, optionally
 * {@link dev.onceonly.spi.BatchClaimStore}), a ledger, a connector's side of the guard
 * ({@link dev.onceonly.spi.Dispatch}), listeners and health probes. Each interface states its contract;
 * the contract suites in this project's {@code src/test/java/dev/onceonly/contract} check the built-in
 * implementations against it. Public API.
 */
package dev.onceonly.spi;
