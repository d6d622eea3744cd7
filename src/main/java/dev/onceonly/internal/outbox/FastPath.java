package dev.onceonly.internal.outbox;

import dev.onceonly.internal.support.LogId;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The relay's fast path: the ids of rows just committed, queued, and one worker at a time that hands
 * them to {@code relay} in batches of up to {@code batchSize}.
 *
 * <p>Under load it gathers: a batch starts no sooner than {@code gather} after the last one ended,
 * and takes the rows committed until then. A relay transaction costs the database about as much for
 * one row as for several (BENCHMARKS.md), and at one consumer channel rows come in one at a time, a
 * little slower than a relay transaction takes, so without the wait nearly every row would pay a
 * transaction of its own. A row committed when the fast path has been idle for longer than
 * {@code gather} goes out at once, and so does a whole batch. The wait is a scheduled task, not a
 * sleeping thread.
 */
final class FastPath {

    /** {@link #lastEnded} before the first batch. */
    private static final long NEVER = Long.MIN_VALUE;

    private final int batchSize;
    private final long gatherMillis;
    private final Clock clock;
    private final Executor executor;
    private final ScheduledExecutorService scheduler;
    private final Consumer<List<Long>> relay;
    private final ConcurrentLinkedQueue<Long> committed = new ConcurrentLinkedQueue<>();
    /** How many ids {@link #committed} holds (its own size() walks the queue). */
    private final AtomicInteger queued = new AtomicInteger();
    /** A worker runs, or is scheduled to run when a gather is over. */
    private final AtomicBoolean draining = new AtomicBoolean();
    /** The worker scheduled to run when a gather is over; cancelled on close. */
    private volatile Gather gathering;
    /** When ({@link Clock#millis()}) the last batch ended. */
    private volatile long lastEnded = NEVER;
    private volatile boolean closed;

    /**
     * @param batchSize rows per batch
     * @param gather    the least time from the end of one batch to the start of the next, unless a
     *                  whole batch waits; zero: no wait
     * @param clock     measures the gather
     * @param executor  runs the worker
     * @param scheduler runs it when a gather is over
     * @param relay     relays one batch in a transaction of its own; what it throws is logged, and
     *                  its rows are left to the sweep
     */
    FastPath(int batchSize, Duration gather, Clock clock, Executor executor, ScheduledExecutorService scheduler,
             Consumer<List<Long>> relay) {
        this.batchSize = batchSize;
        this.gatherMillis = gather.toMillis();
        this.clock = clock;
        this.executor = executor;
        this.scheduler = scheduler;
        this.relay = relay;
    }

    /** Queues the ids of rows just committed and returns at once. */
    void committed(List<Long> rows) {
        committed.addAll(rows);
        queued.addAndGet(rows.size());
        startDrain();
    }

    /** {@return how many committed rows' ids wait for the worker (a read for checks, no decision)} */
    int queued() {
        return queued.get();
    }

    /**
     * One wait for a gather: its task, and whether it started. A scheduler may drop the task without
     * running it (a managed executor cancels or aborts a task whose context is gone); whoever takes
     * {@link #start} first, the task or a commit that found it dropped, goes on with {@link #draining}.
     */
    private static final class Gather {
        private final AtomicBoolean started = new AtomicBoolean();
        private volatile ScheduledFuture<?> task;

        /** {@return true for the one caller that goes on: the task, or the commit that found it dropped} */
        boolean start() {
            return started.compareAndSet(false, true);
        }

        /**
         * {@return whether its task is over without having started: it never will, and {@link #draining} is free to
         * take}
         */
        boolean dropped() {
            ScheduledFuture<?> t = task;
            return t != null && t.isDone() && start();
        }
    }

    /** Starts the worker, at once or when the gather is over, unless one runs or waits (or the fast path is closed). */
    private void startDrain() {
        Gather waiting = gathering;
        if (!closed && (draining.compareAndSet(false, true) || waiting != null && waiting.dropped())) {
            long wait = gatherLeft();
            if (wait == 0 || !drainIn(wait)) {
                runDrain(false);
            }
        }
    }

    /** {@return milliseconds until the gather since the last batch is over} Zero when there was none, or a whole batch waits. */
    private long gatherLeft() {
        long ended = lastEnded;
        if (gatherMillis == 0 || ended == NEVER || queued.get() >= batchSize) {
            return 0;
        }
        long since = clock.millis() - ended;
        // A clock set back makes it negative: never wait longer than one gather.
        return since >= gatherMillis ? 0 : Math.min(gatherMillis, gatherMillis - since);
    }

    /**
     * Runs the worker on the executor; the caller holds {@link #draining}.
     *
     * @param gathered it waited for the gather: its first batch goes ahead whatever the clock says
     */
    private void runDrain(boolean gathered) {
        try {
            executor.execute(() -> drain(gathered));
        } catch (RuntimeException rejected) {
            // The executor refuses while the application stops: the sweep of the next start takes them.
            draining.set(false);
        }
    }

    /** {@return whether the worker is scheduled to run in {@code millis}} The caller holds {@link #draining}. */
    private boolean drainIn(long millis) {
        Gather gather = new Gather();
        try {
            gather.task = scheduler.schedule(() -> {
                if (!gather.start()) {
                    return; // a commit found it dropped and went on without it
                }
                if (closed) {
                    draining.set(false);
                } else {
                    runDrain(true);
                }
            }, millis, TimeUnit.MILLISECONDS);
            gathering = gather;
            // close() may have read the previous gather: whichever of the two cancels this one lets go of draining.
            if (closed && gather.task.cancel(false) && gather.start()) {
                draining.set(false);
            }
            return true;
        } catch (RuntimeException rejected) {
            return false; // the scheduler refuses while the application stops: go on without waiting
        }
    }

    private void drain(boolean gathered) {
        try {
            for (boolean first = true; !closed; first = false) {
                if (!(first && gathered) && gatherLeft() > 0) {
                    break; // the rows committed meanwhile wait for the gather, with those still to come
                }
                List<Long> batch = new ArrayList<>();
                for (Long id; batch.size() < batchSize && (id = committed.poll()) != null; ) {
                    batch.add(id);
                }
                if (batch.isEmpty()) {
                    break;
                }
                queued.addAndGet(-batch.size());
                try {
                    relay.accept(batch);
                } finally {
                    lastEnded = clock.millis();
                }
            }
        } catch (RuntimeException e) {
            // The rows stay pending: the sweep publishes them.
            LogId.ONCE0602W.log("fast path", e.getClass().getSimpleName() + ": " + e.getMessage());
        } finally {
            draining.set(false);
        }
        // Rows left waiting, or committed after the last poll while the worker still ran, are not left behind.
        if (!committed.isEmpty()) {
            startDrain();
        }
    }

    /**
     * Stops: a worker waiting for a gather is cancelled (its rows stay pending for the sweep of the
     * next start), one that runs is waited for up to {@code wait}.
     */
    void close(Duration wait) {
        closed = true;
        Gather waiting = gathering;
        if (waiting != null && waiting.task.cancel(false) && waiting.start()) {
            draining.set(false);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        while (draining.get() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
