package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.contract.LedgerContract;
import dev.onceonly.internal.jta.NewTransaction;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.NonTransactionalConnections;
import dev.onceonly.testing.ScratchDatabase;
import jakarta.transaction.Status;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        db = ScratchDatabase.create(kind(), true, true);
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
        return newLedger(KEY_PREFIX, clock);
    }

    /** A ledger of the application with key prefix {@code keyPrefix}, on this class's database. */
    private JpaLedger newLedger(String keyPrefix, Clock clock) {
        return new JpaLedger(keyPrefix, db.tables().ledger(), jta::entityManager, this::newTransaction, clock);
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

    /**
     * Applications sharing a database share the table: each one's purge deletes its own old rows and
     * nothing of the others', also when one's key prefix begins with the other's ({@code oo:} and
     * {@code oo:<consumer>:}, whose keys both begin with {@code oo:<consumer>:}), or holds SQL
     * wildcards and a character of two UTF-8 bytes.
     */
    @Test
    void eachApplicationsPurgeDeletesOnlyItsOwnRows() throws Exception {
        String consumer = consumer();
        List<String> prefixes = List.of(KEY_PREFIX, KEY_PREFIX + consumer + ":", "billing_%\u00e9:");
        Map<String, List<String>> old = new LinkedHashMap<>();
        Map<String, List<String>> newer = new LinkedHashMap<>();
        for (String prefix : prefixes) {
            JpaLedger application = newLedger(prefix, clock);
            old.put(prefix, write(application, prefix, consumer, 3, PURGE_CUTOFF.minus(Duration.ofDays(1))));
            newer.put(prefix, write(application, prefix, consumer, 1, PURGE_CUTOFF.plusSeconds(1)));
        }
        Set<String> purged = new HashSet<>();
        for (String prefix : prefixes) {
            assertEquals(3, newLedger(prefix, clock).purge(PURGE_CUTOFF, 2), "rows the purge of " + prefix + " deleted");
            purged.add(prefix);
            for (String p : prefixes) {
                for (String key : old.get(p)) {
                    assertEquals(!purged.contains(p), committedRow(key).isPresent(), "old row " + key + " after purging " + purged);
                }
                for (String key : newer.get(p)) {
                    assertTrue(committedRow(key).isPresent(), "newer row " + key);
                }
            }
        }
    }

    /** Commits {@code n} rows of {@code consumer} through {@code application}, written at {@code at}; returns their keys. */
    private List<String> write(JpaLedger application, String prefix, String consumer, int n, Instant at) throws Exception {
        setClock(at);
        List<String> keys = new ArrayList<>();
        inTransaction(tx -> {
            for (int i = 0; i < n; i++) {
                String key = key(prefix, consumer);
                assertEquals(LedgerDecision.INSERTED, application.insert(key, consumer, hash()));
                keys.add(key);
            }
            return null;
        });
        return keys;
    }

    /** The startup check passes where the ledger writes in the business transaction, and leaves no row behind. */
    @Test
    void theTransactionCheckPassesWhereTheLedgerWritesInTheTransaction() throws Exception {
        assertEquals(Optional.empty(), newLedger(KEY_PREFIX, clock).transactionProblem());
        assertEquals(0, checkRowsLeft());
    }

    /**
     * On connections that do not join the transaction (Liberty's {@code transactional="false"}), a
     * row written in a transaction that rolls back stays: the startup check says so, and leaves no
     * row behind.
     */
    @Test
    void theTransactionCheckFailsOnConnectionsThatDoNotJoinTheTransaction() throws Exception {
        try (SessionFactory outside = NonTransactionalConnections.sessionFactory(db)) {
            LocalJta outsideJta = new LocalJta(outside);
            Optional<String> problem = new JpaLedger(KEY_PREFIX, db.tables().ledger(), outsideJta::entityManager, outsideJta, clock).transactionProblem();
            assertTrue(problem.isPresent() && problem.get().contains("rolled back"), String.valueOf(problem));
        }
        assertEquals(0, checkRowsLeft());
    }

    private int checkRowsLeft() throws Exception {
        try (Connection c = db.connect();
             PreparedStatement s = c.prepareStatement("select count(*) from " + db.tables().ledger() + " where consumer = ?")) {
            s.setString(1, JpaLedger.CHECK_CONSUMER);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
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
             PreparedStatement s = c.prepareStatement("delete from " + db.tables().ledger() + " where msg_id = ?")) {
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
            check.check(new JpaLedger(KEY_PREFIX, empty.tables().ledger(), emptyJta::entityManager, emptyJta, Clock.systemUTC()));
        }
    }
}
