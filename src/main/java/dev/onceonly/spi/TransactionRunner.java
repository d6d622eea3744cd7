package dev.onceonly.spi;

/**
 * Runs the guarded work inside a transaction and tells the engine how that transaction ended.
 * The JTA implementation joins the caller's transaction or begins one, and reports from a
 * {@code Synchronization.afterCompletion}, so a commit that fails at the very end is reported as a
 * rollback. {@link #NONE} is for consumers without a transactional resource.
 */
public interface TransactionRunner {

    /**
     * Runs {@code work} in a transaction and calls {@code completion} exactly once, after the
     * transaction completed. When the caller's transaction is joined, that happens when the caller's
     * transaction completes, possibly after this method returned.
     *
     * @param <T> what {@code work} returns
     * @param work the ledger insert and the business method
     * @param completion asked before the commit and told how the transaction ended
     * @return what {@code work} returned
     * @throws Exception what {@code work} threw, or the failure of the commit
     */
    <T> T run(Work<T> work, Completion completion) throws Exception;

    /**
     * {@return the identity of the transaction current on the calling thread (equal for the same
     * transaction, as JTA's {@code TransactionSynchronizationRegistry.getTransactionKey()}), or
     * {@code null} when the runner cannot tell; called inside {@link Work#call}} The guard ties a
     * batch's outbox sends to the batch's own transaction with it: a send from a transaction the
     * handler started apart ({@code REQUIRES_NEW}) commits even when the batch runs again.
     */
    default Object currentTransaction() {
        return null;
    }

    /**
     * Guarded work: ledger insert then the business method.
     *
     * @param <T> what the work returns
     */
    @FunctionalInterface
    interface Work<T> {
        /**
         * Does the work.
         *
         * @return what the business method returned
         * @throws Exception what the ledger or the business method threw
         */
        T call() throws Exception;
    }

    /** Asked once whether the transaction may commit, and told once how it ended. */
    @FunctionalInterface
    interface Completion {
        /**
         * Called once when the transaction is about to commit (JTA {@code beforeCompletion}), never
         * when it rolls back; {@code false} makes it roll back instead. Must be quick.
         *
         * @return whether the transaction may commit
         */
        default boolean mayCommit() {
            return true;
        }

        /**
         * Called once, after the transaction completed.
         *
         * @param committed whether it committed
         */
        void completed(boolean committed);
    }

    /**
     * No transaction: "committed" means the work returned normally. With nothing to roll back,
     * {@link Completion#mayCommit()} is not asked.
     */
    TransactionRunner NONE = new TransactionRunner() {
        @Override
        public <T> T run(Work<T> work, Completion completion) throws Exception {
            T result;
            try {
                result = work.call();
            } catch (Exception | Error e) {
                completion.completed(false);
                throw e;
            }
            completion.completed(true);
            return result;
        }
    };
}
