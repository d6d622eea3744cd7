package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The outbox table's contract on Postgresql (for the servers: this machine's, in a scratch schema or database). */
class JpaOutboxStorePostgresqlTest extends JpaOutboxStoreTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.POSTGRESQL;
    }
}
