package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The result store contract in the ledger on this machine's MariaDB (127.0.0.1:3306), in a scratch database; fails (never skips) when it is down. */
class JpaResultStoreMariadbTest extends JpaResultStoreTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.MARIADB;
    }
}
