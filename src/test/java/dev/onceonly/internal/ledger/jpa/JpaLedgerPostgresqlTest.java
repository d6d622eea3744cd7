package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The ledger contract on {@link JpaLedger} and this machine's PostgreSQL (127.0.0.1:5432, database test), in a scratch schema. Fails (never skips) when PostgreSQL is down. */
class JpaLedgerPostgresqlTest extends JpaLedgerTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.POSTGRESQL;
    }
}
