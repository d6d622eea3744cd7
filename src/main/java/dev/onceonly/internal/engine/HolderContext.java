package dev.onceonly.internal.engine;

import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.GuardListener;

/**
 * What a holder of a claim works with, one per engine: the store its token is fenced by (undecorated:
 * a holder's own calls carry no done marks), the listener told of renewals and lost leases, and the
 * sweep that renews its lease. Shared, so that each claim held costs one reference to it.
 *
 * @param store    the claim store
 * @param listener told of renewals, lost leases and store errors
 * @param leases   renews held leases
 */
record HolderContext(ClaimStore store, GuardListener listener, LeaseSweep leases) {
}
