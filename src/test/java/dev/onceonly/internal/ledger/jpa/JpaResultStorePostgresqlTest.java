package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The result store contract in the ledger on this machine's PostgreSQL (127.0.0.1:5432, database test), in a scratch schema; fails (never skips) when it is down. */
class JpaResultStorePostgresqlTest extends JpaResultStoreTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.POSTGRESQL;
    }
}
