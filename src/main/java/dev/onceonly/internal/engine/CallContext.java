package dev.onceonly.internal.engine;

import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger;

/**
 * What a {@link GuardedCall} works with, one per engine: the ledger (or {@code null} when no consumer
 * uses one), the listener its phases are told to, and the finaliser that ends it. Shared, so that
 * each message costs one reference to it.
 *
 * @param finaliser finishes the call's claim after its transaction and reports the decision
 * @param ledger    the ledger, or {@code null}
 * @param listener  told the call's phases and ledger decisions
 */
record CallContext(Finaliser finaliser, Ledger ledger, GuardListener listener) {
}
