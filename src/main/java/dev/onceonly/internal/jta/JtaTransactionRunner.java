package dev.onceonly.internal.jta;

import dev.onceonly.internal.support.LogId;
import dev.onceonly.spi.TransactionRunner;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.UserTransaction;

import java.util.Objects;

/**
 * Runs the guarded work in a JTA transaction with {@code REQUIRED} semantics: it joins the
 * caller's transaction, or begins one and commits it when the work returns.
 *
 * <p>The engine learns the outcome from {@link Synchronization#afterCompletion}, not from the work
 * returning: a commit that fails at the very end (a deferred constraint, a transaction marked
 * rollback-only, a database gone at commit) is reported as {@code committed=false}. When the
 * caller's transaction is joined, that report comes when the caller's transaction completes.
 *
 * <p>Work that throws never commits: a transaction begun here is rolled back, a joined one is marked
 * rollback-only. Otherwise the ledger row could commit without the business effect, and the
 * message would be a "duplicate" that was never processed. This holds for checked exceptions too,
 * unlike {@code @Transactional}'s default.
 *
 * <p>Beginning a transaction uses {@link UserTransaction}, which Jakarta Transactions forbids inside
 * a {@code @Transactional(SUPPORTS)} method that has no transaction; such a caller gets the
 * container's {@link IllegalStateException}.
 */
public final class JtaTransactionRunner implements TransactionRunner {

    private final UserTransaction userTransaction;
    private final TransactionSynchronizationRegistry registry;

    /**
     * A runner on the container's transaction manager.
     *
     * @param userTransaction begins a transaction when the caller has none
     * @param registry        tells whether a transaction is active and registers the completion
     */
    public JtaTransactionRunner(UserTransaction userTransaction, TransactionSynchronizationRegistry registry) {
        this.userTransaction = Objects.requireNonNull(userTransaction, "userTransaction");
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public <T> T run(Work<T> work, Completion completion) throws Exception {
        boolean begin = registry.getTransactionStatus() == Status.STATUS_NO_TRANSACTION;
        try {
            if (begin) {
                userTransaction.begin();
            }
            registry.registerInterposedSynchronization(new Reporter(completion, registry));
        } catch (Exception | Error e) {
            // No synchronization is registered, so nobody else will tell the engine.
            if (begin && registry.getTransactionStatus() != Status.STATUS_NO_TRANSACTION) {
                rollback(e);
            }
            completion.completed(false);
            throw e;
        }
        T result;
        try {
            result = work.call();
        } catch (Exception | Error e) {
            if (begin) {
                rollback(e);
            } else {
                registry.setRollbackOnly();
            }
            throw e;
        }
        if (begin) {
            // Throws RollbackException when the transaction was marked rollback-only or the commit
            // failed; the Reporter has then already said committed=false.
            userTransaction.commit();
        }
        return result;
    }

    @Override
    public Object currentTransaction() {
        return registry.getTransactionKey();
    }

    private void rollback(Throwable cause) {
        try {
            userTransaction.rollback();
        } catch (Exception | Error e) {
            cause.addSuppressed(e);
        }
    }

    /** Asks the engine whether the transaction may commit, and tells it once how it ended. */
    private record Reporter(Completion completion, TransactionSynchronizationRegistry registry) implements Synchronization {

        @Override
        public void beforeCompletion() {
            boolean may;
            try {
                may = completion.mayCommit();
            } catch (RuntimeException | Error e) {
                LogId.ONCE0405W.log(e);
                may = false; // not knowing whether the commit is safe: do not commit
            }
            if (!may) {
                registry.setRollbackOnly();
            }
        }

        @Override
        public void afterCompletion(int status) {
            try {
                completion.completed(status == Status.STATUS_COMMITTED);
            } catch (RuntimeException | Error e) {
                // Thrown into the transaction manager it would be logged there and lost; the
                // transaction's outcome is final either way.
                LogId.ONCE0405W.log(e);
            }
        }
    }
}
