package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.testing.ScratchDatabase;

/** The outbox store contract on {@link JpaOutboxStore} and H2, on a renamed table. */
class JpaOutboxStoreContractH2Test extends JpaOutboxStoreContractTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.H2;
    }
}
