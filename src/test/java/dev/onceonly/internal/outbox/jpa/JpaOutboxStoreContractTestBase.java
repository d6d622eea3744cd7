package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.contract.OutboxStoreContract;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.Statement;
import java.util.function.Supplier;

/**
 * The {@link OutboxStore} contract on {@link JpaOutboxStore} (the simulation's table passes the same),
 * on a table of another name than the shipped one, as for an application that shares its database
 * (on PostgreSQL also qualified by its schema). One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JpaOutboxStoreContractTestBase extends OutboxStoreContract {

    private ScratchDatabase db;
    private LocalJta jta;
    private OutboxStore store;

    protected abstract ScratchDatabase.Kind kind();

    @BeforeAll
    void createDatabase() throws Exception {
        db = ScratchDatabase.create(kind(), true, true);
        jta = new LocalJta(db.sessionFactory());
        store = new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "oo:");
    }

    @AfterAll
    void dropDatabase() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    @BeforeEach
    void empty() throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.executeUpdate("delete from " + db.tables().outbox());
        }
    }

    @Override
    protected OutboxStore store() {
        return store;
    }

    @Override
    protected <T> T inNewTransaction(Supplier<T> work) {
        return jta.call(work);
    }
}
