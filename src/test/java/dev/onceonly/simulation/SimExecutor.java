package dev.onceonly.simulation;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One instance's executors and schedulers on the {@link SimLoop}: every task it is given runs on the
 * loop's thread at its virtual time, a little late by the seed's choice. Nothing here blocks: a
 * future's {@code get} is only for tasks that have run. After the instance crashed, or was shut down,
 * new tasks are refused as by a terminated pool.
 */
final class SimExecutor extends AbstractExecutorService implements ScheduledExecutorService {

    /** How late a task may start after it was due: the seed orders tasks due together. */
    private static final long JITTER_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

    private final SimLoop loop;
    final SimLoop.Owner owner;
    private volatile boolean shutdown;

    SimExecutor(SimLoop loop, SimLoop.Owner owner) {
        this.loop = loop;
        this.owner = owner;
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        refuseWhenStopped();
        Future<Object> f = new Future<>();
        f.task = loop.schedule(owner, unit.toNanos(delay), JITTER_NANOS, () -> f.run(() -> {
            command.run();
            return null;
        }));
        return f;
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        refuseWhenStopped();
        Future<V> f = new Future<>();
        f.task = loop.schedule(owner, unit.toNanos(delay), JITTER_NANOS, () -> f.run(callable));
        return f;
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return periodic(command, unit.toNanos(initialDelay), unit.toNanos(period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return periodic(command, unit.toNanos(initialDelay), unit.toNanos(delay));
    }

    private ScheduledFuture<?> periodic(Runnable command, long first, long period) {
        refuseWhenStopped();
        Future<Object> f = new Future<>();
        f.periodic = true;
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            if (f.cancelled || shutdown) {
                return;
            }
            f.task = loop.schedule(owner, period, JITTER_NANOS, next[0]);
            command.run();
        };
        f.task = loop.schedule(owner, first, JITTER_NANOS, next[0]);
        return f;
    }

    private void refuseWhenStopped() {
        if (shutdown || owner.dead) {
            throw new RejectedExecutionException(owner + " is stopped");
        }
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        loop.dropAll(owner);
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }

    /** A future on the loop: done once its task ran (or was cancelled). */
    private static final class Future<V> implements ScheduledFuture<V> {
        volatile SimLoop.Task task;
        volatile boolean cancelled;
        volatile boolean periodic;
        private volatile boolean done;
        private V value;
        private Throwable failure;

        void run(Callable<V> body) {
            try {
                value = body.call();
            } catch (SimLoop.Crash c) {
                throw c;
            } catch (RuntimeException e) {
                failure = e;
                throw e;
            } catch (Exception e) {
                failure = e;
            } finally {
                done = true;
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done) {
                return false;
            }
            cancelled = true;
            SimLoop.Task t = task;
            if (t != null) {
                t.cancelled = true;
            }
            done = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done;
        }

        @Override
        public V get() throws ExecutionException {
            if (!done) {
                throw new IllegalStateException("the simulation never blocks: get() of a task that has not run");
            }
            if (cancelled) {
                throw new java.util.concurrent.CancellationException();
            }
            if (failure != null) {
                throw new ExecutionException(failure);
            }
            return value;
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws ExecutionException {
            return get();
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return 0;
        }

        @Override
        public int compareTo(Delayed o) {
            return 0;
        }
    }
}
