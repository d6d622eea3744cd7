package dev.onceonly.jpa;

import dev.onceonly.contract.LedgerContract;
import dev.onceonly.spi.Ledger;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import jakarta.transaction.Status;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.util.Optional;
import java.util.function.Supplier;

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
