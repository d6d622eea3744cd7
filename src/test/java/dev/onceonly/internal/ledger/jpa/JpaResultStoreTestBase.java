package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.contract.ResultStoreContract;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.ScratchDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The result store contract on {@link JpaResultStore}: the ledger's table on a scratch database,
 * Hibernate in the test JVM, the container's transactions emulated by {@link LocalJta}, the ledger
 * row of each call inserted by the real {@link JpaLedger} first. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JpaResultStoreTestBase extends ResultStoreContract<JpaResultStore> {

    private final MutableClock clock = new MutableClock();
    private ScratchDatabase db;
    private LocalJta jta;
    private JpaLedger ledger;

    protected abstract ScratchDatabase.Kind kind();

    @BeforeAll
    void createDatabase() throws Exception {
        db = ScratchDatabase.create(kind(), true);
        jta = new LocalJta(db.sessionFactory());
        ledger = new JpaLedger("oo:", db.tables().ledger(), jta::entityManager, jta, clock);
    }

    @AfterAll
    void dropDatabase() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    @Override
    protected JpaResultStore newStore() {
        return new JpaResultStore(db.tables().ledger(), jta::entityManager, jta, clock);
    }

    @Override
    protected void elapse(Duration d) {
        clock.advance(d);
    }

    @Override
    protected void call(String key, boolean commit, Runnable puts) throws Exception {
        jta.begin();
        try {
            assertEquals(LedgerDecision.INSERTED, ledger.insert(key, "results", ""));
            puts.run();
        } catch (Exception | Error e) {
            jta.rollback();
            throw e;
        }
        if (commit) {
            jta.commit();
        } else {
            jta.rollback();
        }
    }

    /** The result rides on its ledger row: a put in a transaction that holds no row of the key fails, and changes nothing. */
    @Test
    void aPutWithoutTheKeysRowFails() throws Exception {
        String key = key();
        jta.begin();
        try {
            assertThrows(IllegalStateException.class, () -> store.put(key, "\"orphan\"", Duration.ofHours(1)));
        } finally {
            jta.rollback();
        }
        assertEquals(Optional.empty(), store.get(key));
    }

    /**
     * A ledger table of an earlier version, without the result columns: the startup check names what
     * is missing, and the shipped DDL (its {@code ALTER TABLE}) adds the columns to the table as it is.
     */
    @Test
    void aTableOfAnEarlierVersionIsNamedUntilTheShippedDdlAddsTheColumns() throws Exception {
        try (ScratchDatabase old = ScratchDatabase.create(kind(), false)) {
            try (Connection c = old.connect(); Statement s = c.createStatement()) {
                s.execute("create table " + old.tables().ledger() + " (msg_id varchar(200) not null primary key,"
                        + " consumer varchar(100) not null, body_sha256 varchar(64) not null, processed_at timestamp not null)");
            }
            LocalJta oldJta = new LocalJta(old.sessionFactory());
            JpaResultStore results = new JpaResultStore(old.tables().ledger(), oldJta::entityManager, oldJta, clock);
            Optional<String> problem = results.problem();
            assertTrue(problem.isPresent() && problem.get().contains(JpaResultStore.COLUMNS), String.valueOf(problem));

            LedgerSchema.apply(old.dataSource(), LedgerSchema.Part.LEDGER, old.tables().ledger());
            assertEquals(Optional.empty(), results.problem());
        }
    }
}
