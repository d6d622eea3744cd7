package dev.onceonly.internal.result;

import dev.onceonly.spi.TransactionRunner;

import java.util.Objects;

/**
 * The transaction runner the guard is given when a consumer keeps its results in a store that is not
 * transactional: around the runner it decorates, it writes a call's {@link PendingResult} once the
 * call's transaction committed, before the guard's own completion marks the key done. So a
 * duplicate that finds the key done finds the result too, and a run that did not commit (a failure,
 * a claim lost before the commit) writes nothing over the result of the run that did.
 */
public final class ResultWrites implements TransactionRunner {

    private final TransactionRunner transactions;

    /**
     * @param transactions the runner the calls run in
     */
    public ResultWrites(TransactionRunner transactions) {
        this.transactions = Objects.requireNonNull(transactions, "transactions");
    }

    @Override
    public <T> T run(Work<T> work, Completion completion) throws Exception {
        Call<T> call = new Call<>(work, completion);
        return transactions.run(call, call);
    }

    /** One call: what its work returned, kept for its completion, which a joined transaction may run on another thread. */
    private static final class Call<T> implements Work<T>, Completion {
        private final Work<T> work;
        private final Completion completion;
        private volatile T returned;

        Call(Work<T> work, Completion completion) {
            this.work = work;
            this.completion = completion;
        }

        @Override
        public T call() throws Exception {
            T r = work.call();
            returned = r;
            return r;
        }

        @Override
        public boolean mayCommit() {
            return completion.mayCommit();
        }

        @Override
        public void completed(boolean committed) {
            if (committed && returned instanceof PendingResult pending) {
                pending.write();
            }
            completion.completed(committed);
        }
    }
}
