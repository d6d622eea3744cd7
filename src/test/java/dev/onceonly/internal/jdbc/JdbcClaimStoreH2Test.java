package dev.onceonly.internal.jdbc;

import dev.onceonly.testing.ScratchDatabase;

/** The claim store contract on the database store and H2. */
class JdbcClaimStoreH2Test extends JdbcClaimStoreTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.H2;
    }
}
