package dev.onceonly.internal.jdbc;

import dev.onceonly.testing.ScratchDatabase;

/** The claim store contract on the database store and Postgresql. */
class JdbcClaimStorePostgresqlTest extends JdbcClaimStoreTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.POSTGRESQL;
    }
}
