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

/** The {@link OutboxStore} contract on {@link JpaOutboxStore}, H2 (the simulation's table passes the same). */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JpaOutboxStoreContractH2Test extends OutboxStoreContract {

    private ScratchDatabase db;
    private LocalJta jta;
    private OutboxStore store;

    @BeforeAll
    void createDatabase() throws Exception {
        db = ScratchDatabase.create(ScratchDatabase.Kind.H2, true);
        jta = new LocalJta(db.sessionFactory());
        store = new JpaOutboxStore(jta::entityManager, jta, "oo:");
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
            s.executeUpdate("delete from onceonly_outbox");
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
