package dev.onceonly.jpa;

import dev.onceonly.contract.LedgerContract;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import jakarta.transaction.Status;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The {@link LedgerContract} on {@link JpaLedger}, with Hibernate in the test JVM on a scratch
 * database and the container's transactions emulated by {@link LocalJta}: the ledger gets the
 * transaction-scoped entity manager and the {@code REQUIRES_NEW} {@link NewTransaction} it gets in
 * Liberty. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JpaLedgerTestBase extends LedgerContract {

    private ScratchDatabase db;
    private LocalJta jta;
    private volatile Runnable beforeVerifier;

    protected abstract ScratchDatabase.Kind kind();

    @BeforeAll
    void createDatabase() throws Exception {
        db = ScratchDatabase.create(kind(), true);
        jta = new LocalJta(db.sessionFactory());
    }

    @AfterAll
    void dropDatabase() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    @Override
    protected Ledger newLedger(Clock clock) {
        return new JpaLedger(jta::entityManager, this::newTransaction, clock);
    }

    /** The ledger's {@code REQUIRES_NEW}: the hook of {@link #beforeTheVerifierReads}, then {@link LocalJta#call}. */
    private <T> T newTransaction(Supplier<T> work) {
        Runnable hook = beforeVerifier;
        if (hook != null) {
            beforeVerifier = null;
            hook.run();
        }
        return jta.call(work);
    }

    @Override
    protected <T> T inTransaction(TransactionalWork<T> work) throws Exception {
        jta.begin();
        Object mine = jta.getTransactionKey();
        Transaction tx = new Transaction() {
            @Override
            public void setRollbackOnly() {
                jta.setRollbackOnly();
            }

            @Override
            public boolean isRollbackOnly() {
                return jta.getStatus() == Status.STATUS_MARKED_ROLLBACK;
            }

            @Override
            public boolean isCurrent() {
                return jta.getTransactionKey() == mine;
            }
        };
        T result;
        try {
            result = work.run(tx);
        } catch (Exception | Error e) {
            jta.rollback();
            throw e;
        }
        if (tx.isRollbackOnly()) {
            jta.rollback();
        } else {
            jta.commit();
        }
        return result;
    }

    /**
     * A duplicate is a routine outcome the ledger handles: Hibernate logs no SQL error for it. The same
     * capture does see the error of a real failure (a key too long for the column), so it can fail.
     * Before the ledger inserted with its own statement, Hibernate logged every duplicate as an ERROR.
     */
    @Test
    void aDuplicateLeavesNoSqlErrorInTheLogButARealFailureDoes() throws Exception {
        Logger sqlErrors = Logger.getLogger("org.hibernate.engine.jdbc.spi.SqlExceptionHelper");
        List<String> logged = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
                    logged.add(record.getLevel() + " " + record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        sqlErrors.addHandler(capture);
        try {
            String key = key();
            String hash = hash();
            assertEquals(LedgerDecision.INSERTED, inTransaction(tx -> ledger.insert(key, consumer(), hash)));
            assertEquals(LedgerDecision.DUPLICATE, inTransaction(tx -> ledger.insert(key, consumer(), hash)));
            assertEquals(List.of(), logged, "log lines of Hibernate's SQL exception logger for a duplicate");

            assertThrows(RuntimeException.class,
                    () -> inTransaction(tx -> ledger.insert(key() + ":" + "x".repeat(300), consumer(), hash())));
            assertFalse(logged.isEmpty(), "a real failure is still logged");
        } finally {
            sqlErrors.removeHandler(capture);
        }
    }

    @Override
    protected Optional<Row> committedRow(String key) {
        return jta.call(() -> Optional.ofNullable(jta.entityManager().find(ProcessedMessage.class, key)).map(JpaLedgerTestBase::row));
    }

    @Override
    protected Optional<Row> readInCurrentTransaction(String key) {
        return Optional.ofNullable(jta.entityManager().find(ProcessedMessage.class, key)).map(JpaLedgerTestBase::row);
    }

    private static Row row(ProcessedMessage p) {
        return new Row(p.msgId(), p.consumer(), p.bodySha256(), p.processedAt());
    }

    @Override
    protected void deleteFromOutside(String key) throws Exception {
        try (Connection c = db.connect();
             PreparedStatement s = c.prepareStatement("delete from onceonly_processed_message where msg_id = ?")) {
            s.setString(1, key);
            s.executeUpdate();
        }
    }

    @Override
    protected int lockWaiters() throws Exception {
        return db.lockWaiters();
    }

    @Override
    protected void beforeTheVerifierReads(Runnable action) {
        beforeVerifier = action;
    }

    @Override
    protected void withoutTheTable(LedgerCheck check) throws Exception {
        try (ScratchDatabase empty = ScratchDatabase.create(kind(), false)) {
            LocalJta emptyJta = new LocalJta(empty.sessionFactory());
            check.check(new JpaLedger(emptyJta::entityManager, emptyJta, Clock.systemUTC()));
        }
    }
}
