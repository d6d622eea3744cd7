package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The result store contract in the ledger on H2 in memory, as in development and the demo; runs everywhere. */
class JpaResultStoreH2Test extends JpaResultStoreTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.H2;
    }
}
