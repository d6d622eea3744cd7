package dev.onceonly.testing;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scheduler with no thread of its own: what it is given waits, whatever the delay, until the test
 * runs it ({@link #runQueued}) on a thread of the test's choosing. A model checker (Lincheck) can then
 * interleave a scheduled task with the calls that raced it in production, which a real pool's
 * threads, outside the checker's control, would hide. One-shot runnables only: that is all the code
 * under test schedules; the rest throws {@link UnsupportedOperationException}. Thread-safe.
 */
public final class DrainedScheduler extends AbstractExecutorService implements ScheduledExecutorService {

    private final Queue<Task> queued = new ConcurrentLinkedQueue<>();

    /**
     * Runs, on the calling thread, the tasks queued and not cancelled, including those they queue in
     * turn, until none is left. Several threads may call it at once: each task runs once.
     *
     * @return how many ran
     */
    public int runQueued() {
        int ran = 0;
        for (Task t = queued.poll(); t != null; t = queued.poll()) {
            if (t.start()) {
                t.command.run();
                ran++;
            }
        }
        return ran;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        Task t = new Task(command);
        queued.add(t);
        return t;
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("one-shot runnables only");
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException("one-shot runnables only");
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("one-shot runnables only");
    }

    @Override
    public void shutdown() {
        throw new UnsupportedOperationException("never shut down: the test drains it");
    }

    @Override
    public List<Runnable> shutdownNow() {
        throw new UnsupportedOperationException("never shut down: the test drains it");
    }

    @Override
    public boolean isShutdown() {
        return false;
    }

    @Override
    public boolean isTerminated() {
        return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return false;
    }

    /** A queued task: cancelled, or started, once. */
    private static final class Task implements ScheduledFuture<Object> {
        private static final int QUEUED = 0;
        private static final int STARTED = 1;
        private static final int CANCELLED = 2;

        final Runnable command;
        private final AtomicInteger state = new AtomicInteger(QUEUED);

        Task(Runnable command) {
            this.command = command;
        }

        boolean start() {
            return state.compareAndSet(QUEUED, STARTED);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return state.compareAndSet(QUEUED, CANCELLED);
        }

        @Override
        public boolean isCancelled() {
            return state.get() == CANCELLED;
        }

        @Override
        public boolean isDone() {
            return state.get() != QUEUED;
        }

        @Override
        public Object get() {
            throw new UnsupportedOperationException("nothing waits for a drained task");
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("nothing waits for a drained task");
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }
    }
}
