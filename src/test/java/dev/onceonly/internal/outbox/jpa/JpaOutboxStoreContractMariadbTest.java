package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The outbox store contract on {@link JpaOutboxStore} and this machine's MariaDB, on a renamed table. */
class JpaOutboxStoreContractMariadbTest extends JpaOutboxStoreContractTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.MARIADB;
    }
}
