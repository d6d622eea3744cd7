package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The ledger contract on {@link JpaLedger} and H2 in memory, as in development and the demo; runs everywhere. */
class JpaLedgerH2Test extends JpaLedgerTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.H2;
    }
}
