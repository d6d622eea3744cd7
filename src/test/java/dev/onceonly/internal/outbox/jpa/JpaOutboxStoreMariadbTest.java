package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The outbox table's contract on Mariadb (for the servers: this machine's, in a scratch schema or database). */
class JpaOutboxStoreMariadbTest extends JpaOutboxStoreTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.MARIADB;
    }
}
