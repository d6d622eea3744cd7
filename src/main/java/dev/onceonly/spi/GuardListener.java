package dev.onceonly.spi;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.spi.Ledger.LedgerDecision;

/**
 * Told what the guard does (metrics, CDI events, tests). Called on the guard's own threads, on the
 * hot path: implementations must be fast, must not block and must not throw.
 */
public interface GuardListener {

    /**
     * The final outcome of one message.
     *
     * @param event the outcome and what it was decided for
     */
    void onOutcome(GuardEvent event);

    /**
     * The lease watchdog renewed a claim.
     *
     * @param consumer the consumer name
     */
    default void onLeaseRenewed(String consumer) {
    }

    /**
     * A holder found its claim gone or taken over: the lease expired while the handler ran.
     *
     * @param consumer the consumer name
     */
    default void onLeaseLost(String consumer) {
    }

    /**
     * The claim store failed during {@code operation}.
     *
     * @param consumer the consumer name
     * @param operation {@code claim}, {@code complete}, {@code release} or {@code extend}
     */
    default void onStoreError(String consumer, String operation) {
    }

    /**
     * The ledger answered an insert.
     *
     * @param consumer the consumer name
     * @param decision the ledger's answer
     */
    default void onLedgerDecision(String consumer, LedgerDecision decision) {
    }

    /**
     * A phase of the guard starts ({@code claim}, {@code ledger}, {@code finalise}): tracers open a
     * span, ended through the returned handle when the phase is over.
     *
     * @param consumer the consumer name
     * @param phase {@code claim}, {@code ledger} or {@code finalise}
     * @return the handle ending the phase; {@link Phase#NONE} when nothing is traced
     */
    default Phase startPhase(String consumer, String phase) {
        return Phase.NONE;
    }

    /** A started phase; {@link #end} is called once. */
    @FunctionalInterface
    interface Phase {
        /** The phase is over. */
        void end();

        /** A phase nobody traces. */
        Phase NONE = () -> { };
    }

    /** A listener that ignores everything. */
    GuardListener NONE = event -> { };

    /**
     * One listener telling several, in order.
     *
     * @param listeners the listeners to tell
     * @return a listener telling each of them
     */
    static GuardListener all(java.util.List<GuardListener> listeners) {
        if (listeners.size() == 1) {
            return listeners.get(0);
        }
        GuardListener[] ls = listeners.toArray(GuardListener[]::new);
        return new GuardListener() {
            @Override
            public void onOutcome(GuardEvent event) {
                for (GuardListener l : ls) {
                    l.onOutcome(event);
                }
            }

            @Override
            public void onLeaseRenewed(String consumer) {
                for (GuardListener l : ls) {
                    l.onLeaseRenewed(consumer);
                }
            }

            @Override
            public void onLeaseLost(String consumer) {
                for (GuardListener l : ls) {
                    l.onLeaseLost(consumer);
                }
            }

            @Override
            public void onStoreError(String consumer, String operation) {
                for (GuardListener l : ls) {
                    l.onStoreError(consumer, operation);
                }
            }

            @Override
            public void onLedgerDecision(String consumer, LedgerDecision decision) {
                for (GuardListener l : ls) {
                    l.onLedgerDecision(consumer, decision);
                }
            }

            @Override
            public Phase startPhase(String consumer, String phase) {
                // Usually one tracer at most: no handle is allocated for the listeners that ignore phases.
                Phase only = Phase.NONE;
                java.util.List<Phase> several = null;
                for (GuardListener l : ls) {
                    Phase p = l.startPhase(consumer, phase);
                    if (p == Phase.NONE) {
                        continue;
                    }
                    if (only == Phase.NONE) {
                        only = p;
                    } else {
                        if (several == null) {
                            several = new java.util.ArrayList<>(java.util.List.of(only));
                        }
                        several.add(p);
                    }
                }
                if (several == null) {
                    return only;
                }
                java.util.List<Phase> all = several;
                return () -> all.forEach(Phase::end);
            }
        };
    }
}
