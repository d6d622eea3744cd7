package dev.onceonly.internal.jta;

import dev.onceonly.spi.TransactionRunner;
import jakarta.transaction.RollbackException;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.UserTransaction;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class JtaTransactionRunnerTest {

    /** A one-transaction JTA stand-in: enough to see what the runner asks for and when it reports. */
    static class FakeJta implements UserTransaction, TransactionSynchronizationRegistry {
        int status = Status.STATUS_NO_TRANSACTION;
        boolean failCommit;
        final List<Synchronization> synchronizations = new ArrayList<>();

        @Override
        public void begin() {
            status = Status.STATUS_ACTIVE;
        }

        @Override
        public void commit() throws RollbackException {
            // As a transaction manager does: synchronizations may still veto before the commit.
            if (status == Status.STATUS_ACTIVE) {
                List.copyOf(synchronizations).forEach(Synchronization::beforeCompletion);
            }
            if (status == Status.STATUS_MARKED_ROLLBACK || failCommit) {
                complete(Status.STATUS_ROLLEDBACK);
                throw new RollbackException("rolled back at commit");
            }
            complete(Status.STATUS_COMMITTED);
        }

        @Override
        public void rollback() {
            complete(Status.STATUS_ROLLEDBACK);
        }

        /** What the caller's transaction manager does when the caller's transaction ends. */
        void complete(int outcome) {
            status = outcome;
            synchronizations.forEach(s -> s.afterCompletion(outcome));
            status = Status.STATUS_NO_TRANSACTION;
        }

        @Override
        public void setRollbackOnly() {
            status = Status.STATUS_MARKED_ROLLBACK;
        }

        @Override
        public int getStatus() {
            return status;
        }

        @Override
        public void setTransactionTimeout(int seconds) {
        }

        @Override
        public Object getTransactionKey() {
            return status == Status.STATUS_NO_TRANSACTION ? null : this;
        }

        @Override
        public void putResource(Object key, Object value) {
        }

        @Override
        public Object getResource(Object key) {
            return null;
        }

        @Override
        public void registerInterposedSynchronization(Synchronization sync) {
            synchronizations.add(sync);
        }

        @Override
        public int getTransactionStatus() {
            return status;
        }

        @Override
        public boolean getRollbackOnly() {
            return status == Status.STATUS_MARKED_ROLLBACK;
        }
    }

    final FakeJta jta = new FakeJta();
    final JtaTransactionRunner runner = new JtaTransactionRunner(jta, jta);
    final List<Boolean> reported = new ArrayList<>();

    @Test
    void beginsCommitsAndReportsCommitted() throws Exception {
        assertEquals("done", runner.run(() -> "done", reported::add));
        assertEquals(List.of(true), reported);
    }

    @Test
    void workThatThrowsARuntimeExceptionIsRolledBack() {
        assertThrows(IllegalStateException.class, () -> runner.run(() -> {
            throw new IllegalStateException("handler failed");
        }, reported::add));
        assertEquals(List.of(false), reported);
    }

    @Test
    void workThatThrowsACheckedExceptionIsRolledBackToo() {
        assertThrows(IOException.class, () -> runner.run(() -> {
            throw new IOException("handler failed");
        }, reported::add));
        assertEquals(List.of(false), reported);
    }

    /** The engine may refuse the commit at the last moment (its claim was taken over): it rolls back. */
    @Test
    void aCompletionThatRefusesTheCommitRollsItBack() {
        TransactionRunner.Completion refusing = new TransactionRunner.Completion() {
            @Override
            public boolean mayCommit() {
                return false;
            }

            @Override
            public void completed(boolean committed) {
                reported.add(committed);
            }
        };
        assertThrows(RollbackException.class, () -> runner.run(() -> "done", refusing));
        assertEquals(List.of(false), reported);
    }

    @Test
    void aCommitThatFailsIsReportedAsRolledBack() {
        jta.failCommit = true;
        assertThrows(RollbackException.class, () -> runner.run(() -> "done", reported::add));
        assertEquals(List.of(false), reported);
    }

    @Test
    void workThatMarksTheTransactionRollbackOnlyIsReportedAsRolledBack() {
        assertThrows(RollbackException.class, () -> runner.run(() -> {
            jta.setRollbackOnly();
            return "vetoed";
        }, reported::add));
        assertEquals(List.of(false), reported);
    }

    @Test
    void joinsTheCallersTransactionAndReportsWhenItEnds() throws Exception {
        jta.begin();
        assertEquals("done", runner.run(() -> "done", reported::add));
        assertEquals(List.of(), reported, "nothing is final before the caller's transaction ends");
        jta.commit();
        assertEquals(List.of(true), reported);
    }

    @Test
    void workThatThrowsInACallersTransactionMarksItRollbackOnly() throws Exception {
        jta.begin();
        assertThrows(IOException.class, () -> runner.run(() -> {
            throw new IOException("handler failed");
        }, reported::add));
        assertEquals(Status.STATUS_MARKED_ROLLBACK, jta.status, "the ledger row must not commit without the business effect");
        assertThrows(RollbackException.class, jta::commit);
        assertEquals(List.of(false), reported);
    }

    @Test
    void aCallersTransactionThatCannotBeJoinedIsReportedAtOnce() {
        FakeJta refusing = new FakeJta() {
            @Override
            public void registerInterposedSynchronization(Synchronization sync) {
                throw new IllegalStateException("transaction is not active");
            }
        };
        refusing.begin();
        JtaTransactionRunner joining = new JtaTransactionRunner(refusing, refusing);
        assertThrows(IllegalStateException.class, () -> joining.run(() -> "never", reported::add));
        assertEquals(List.of(false), reported);
    }
}
