package dev.onceonly.internal.engine;

import dev.onceonly.internal.jta.JtaTransactionRunner;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.ScratchDatabase;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Status;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the engine's tests with the ledger on share: real transactions ({@link LocalJta} on a scratch
 * H2 database, one per test class) through the production {@link JtaTransactionRunner}, which notes
 * how each guarded transaction ended; a mutable clock; the engine's scheduler. After each test no
 * transaction may be left open on the test thread.
 */
abstract class LedgerOnEngineTest {

    static ScratchDatabase db;
    static LocalJta jta;
    static EntityManager em;

    final MutableClock clock = new MutableClock();
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    /** How each guarded transaction ended, as the transaction runner reported it. */
    final List<Boolean> transactionEnds = new CopyOnWriteArrayList<>();
    final TransactionRunner transactions = new TransactionRunner() {
        private final JtaTransactionRunner jtaRunner = new JtaTransactionRunner(jta, jta);

        @Override
        public Object currentTransaction() {
            return jtaRunner.currentTransaction();
        }

        @Override
        public <T> T run(Work<T> work, Completion completion) throws Exception {
            return jtaRunner.run(work, new Completion() {
                @Override
                public boolean mayCommit() {
                    return completion.mayCommit();
                }

                @Override
                public void completed(boolean committed) {
                    transactionEnds.add(committed);
                    completion.completed(committed);
                }
            });
        }
    };

    @BeforeAll
    static void openDatabase() throws Exception {
        db = ScratchDatabase.create(ScratchDatabase.Kind.H2, true);
        jta = new LocalJta(db.sessionFactory());
        em = jta.entityManager();
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        db.close();
    }

    @AfterEach
    void stopScheduler() {
        scheduler.shutdownNow();
        assertEquals(Status.STATUS_NO_TRANSACTION, jta.getStatus(), "no transaction left open on the test thread");
    }
}
