package dev.onceonly.internal.support;

/**
 * The idempotency key of the guarded handler running on this thread, with its claim's fence, for
 * the handler's own calls to other services ({@code Idempotency-Key}, {@code Idempotency-Fence}) and
 * for the ids of the messages it sends through the outbox. Set by the engine around the handler
 * only, restored when a nested guarded call ends. This is not how a message reaches the guard (that
 * is the {@code Dispatch}): it only lets a handler's outgoing calls and messages say which message
 * they belong to, and which holder of it makes them.
 */
public final class CurrentKey {

    private static final ThreadLocal<Run> RUN = new ThreadLocal<>();

    private CurrentKey() {
    }

    /** {@return the key of the running handler, or {@code null} outside one} */
    public static String get() {
        Run run = RUN.get();
        return run == null ? null : run.key;
    }

    /**
     * {@return the fence of the running handler's claim: positive; 0 outside a handler, and for a
     * handler that holds no claim or whose store gave no fence}
     */
    public static long fence() {
        Run run = RUN.get();
        return run == null ? 0 : run.fence;
    }

    /**
     * The next number of the running handler's outbox messages: 1 for its first, then 2, and so on.
     * The count belongs to the handler run (the scope), not to a transaction: messages the handler
     * sends in its own transaction and in {@code REQUIRES_NEW} transactions it starts share it, so
     * no two of them get the same number. A nested guarded call counts its own from 1; the outer
     * run's count goes on where it was once it returns. A new run of the same message starts again
     * from 1, so that a handler sends the same ids on every run.
     *
     * @return the number, from 1
     * @throws IllegalStateException outside a guarded handler ({@link #get} is {@code null})
     */
    public static int nextSendNumber() {
        Run run = RUN.get();
        if (run == null) {
            throw new IllegalStateException("no guarded handler runs on this thread");
        }
        return ++run.sends;
    }

    /**
     * Makes {@code key} and {@code fence} current, with a send count of its own starting at 0, until
     * the returned scope closes.
     *
     * @param key   the running handler's key; {@code null} for a handler of several messages (a batch),
     *              which has none, also when it runs inside another guarded handler
     * @param fence its claim's fence; 0 for none
     * @return the scope that restores the previous key and its count
     */
    public static Scope enter(String key, long fence) {
        return enter(key, fence, null);
    }

    /**
     * Makes a batch's handler run current until the returned scope closes: it has no key (see
     * {@link #enter}), and runs in {@code transaction}.
     *
     * @param transaction the identity of the batch's own transaction, or {@code null} when unknown
     * @return the scope that restores the previous key and its count
     */
    public static Scope enterBatch(Object transaction) {
        return enter(null, 0, transaction);
    }

    private static Scope enter(String key, long fence, Object transaction) {
        Run run = new Run(key, fence, transaction, RUN.get());
        RUN.set(run);
        return run;
    }

    /**
     * Whether a batch's handler runs on this thread and {@code transaction} is not the batch's own
     * (a {@code REQUIRES_NEW} one it started): what such a transaction sends commits apart from the
     * batch, and each run of the batch (after a failure, in halves) sends it again, so it needs an
     * id of its own that every run gives it. {@code false} when the batch's transaction is unknown.
     *
     * @param transaction the identity of the transaction current now
     * @return whether a send in it is apart from the running batch's transaction
     */
    public static boolean apartFromTheBatch(Object transaction) {
        Run run = RUN.get();
        return run != null && run.key == null && run.transaction != null && !run.transaction.equals(transaction);
    }

    /** Restores the previous key. */
    @FunctionalInterface
    public interface Scope extends AutoCloseable {
        /** Restores the key that was current before; never throws. */
        @Override
        void close();
    }

    /**
     * One handler run on this thread: its key, how many outbox messages it numbered, and the run it
     * interrupted (a nested guarded call), which its closing makes current again.
     */
    private static final class Run implements Scope {
        final String key;
        final long fence;
        /**
         * A batch's run: the identity of the batch's own transaction, or {@code null} when unknown; else {@code
         * null}.
         */
        final Object transaction;
        final Run previous;
        int sends;

        Run(String key, long fence, Object transaction, Run previous) {
            this.key = key;
            this.fence = fence;
            this.transaction = transaction;
            this.previous = previous;
        }

        /**
         * Sets the previous run back, {@code null} outside any. Not {@code ThreadLocal.remove}: the
         * thread's entry stays, holding nothing (its key is weakly held, so a redeployed application
         * is not pinned), and the next run on this pooled thread reuses it instead of allocating one.
         */
        @Override
        public void close() {
            RUN.set(previous);
        }
    }
}
