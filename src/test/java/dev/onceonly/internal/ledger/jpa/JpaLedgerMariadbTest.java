package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The ledger contract on {@link JpaLedger} and this machine's MariaDB (127.0.0.1:3306), in a scratch database. Fails (never skips) when MariaDB is down. */
class JpaLedgerMariadbTest extends JpaLedgerTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.MARIADB;
    }

    /** InnoDB sets a shared lock on the duplicate index record at a duplicate-key error. */
    @Override
    protected boolean violationLocksTheCollidingRow() {
        return true;
    }
}
