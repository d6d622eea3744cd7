package dev.onceonly.engine;

import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Marks keys done off the consumer's thread, for consumers with the ledger on: their messages are
 * settled (acknowledged) without waiting for the claim store's reply. The completions that queue up
 * while one batch is on its way go out together in the next one ({@link ClaimStore#completeAll}: one
 * round trip on Redis), so under load the store sees a fraction of the round trips.
 *
 * <p>Why only with the ledger: until the done marker is written the key is in progress, and if the
 * instance dies first it stays so until its lease ends; a copy that comes meanwhile is answered BUSY,
 * and one that comes after the lease is claimed again and stopped by the ledger's unique key (its
 * row committed with the effect). Without a ledger nothing would stop that copy, so those consumers
 * complete before the acknowledgement, on the consumer's thread ({@link GuardedCall}).
 *
 * <p>The marks are written by one writer thread of its own, made by the given factory (on Liberty the
 * application's managed thread factory) when the first mark comes. It waits {@link #GATHER_NANOS}
 * after the first mark of a batch for others, writes the batch, and parks when nothing is queued; a
 * mark added then wakes it. Not a task per batch on a scheduled executor: on Liberty each such task
 * costs a timer thread's wake-up, a hand-off to a pool thread and the capture and restore of the
 * application's context, about 50 µs of CPU per message at a few hundred messages a second, more
 * than the consumer's own Redis claim. After {@link #IDLE_NANOS} without a mark the writer ends, and the next
 * mark starts another. When no thread can be had (a stopping application), the mark is written on
 * the adding thread. A store failure hands each call of the batch back to its own retry (the lease
 * sweep's, as for a completion that failed on the consumer's thread).
 */
final class DoneWriter {

    /** Most completions in one round trip: bounds the request and the time one batch holds the writer. */
    static final int MAX_BATCH = 128;
    /**
     * How long the first completion of a batch waits for others. A wake-up of the writer costs the
     * consumer's thread more than the enqueue itself, so at a few hundred messages a second a writer
     * that wrote at once would carry one mark per wake-up; a few milliseconds gather several. Only
     * copies arriving within these milliseconds of the original see its claim in progress (BUSY,
     * retried) instead of done.
     */
    static final long GATHER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /**
     * How long a parked writer waits for a mark before it ends: no thread is held by an application
     * that stopped consuming, and none is started per message when they come a few seconds apart.
     */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(30);

    static final String THREAD_NAME = "onceonly-done-writer";

    /** No writer thread. */
    private static final int NONE = 0;
    /** The writer is running: gathering or writing; it looks at the queue before it parks. */
    private static final int RUNNING = 1;
    /** The writer is parked, waiting for a mark: whoever adds one sets {@link #RUNNING} and wakes it. */
    private static final int PARKED = 2;

    private final ClaimStore store;
    private final ThreadFactory threads;
    private final long idleNanos;
    private final ConcurrentLinkedQueue<Mark> pending = new ConcurrentLinkedQueue<>();
    private final AtomicInteger state = new AtomicInteger(NONE);
    /** The current writer thread; written before {@link #state} lets anyone wake it. */
    private volatile Thread writer;
    private volatile boolean stopped;

    DoneWriter(ClaimStore store, ThreadFactory threads) {
        this(store, threads, IDLE_NANOS);
    }

    DoneWriter(ClaimStore store, ThreadFactory threads, long idleNanos) {
        this.store = store;
        this.threads = threads;
        this.idleNanos = idleNanos;
    }

    /** A completion waiting to be written: what the store is asked, and who is told the answer. */
    interface Mark {
        /** {@return what the store is asked to mark done} */
        ClaimStore.CompleteRequest completeRequest();

        /** The store answered this completion. */
        void doneWritten(HolderResult result);

        /** The batch with this completion failed; must not throw. */
        void doneNotWritten(ClaimStoreException failure);
    }

    /** Queues {@code call}'s completion; it is told the answer ({@link Mark#doneWritten}) once. */
    void add(Mark call) {
        pending.add(call);
        if (stopped) {
            flush(); // the application is stopping: no writer is started any more
            return;
        }
        while (true) {
            int s = state.get();
            if (s == RUNNING) {
                return; // the writer looks at the queue before it parks: it sees this call
            }
            if (s == PARKED && state.compareAndSet(PARKED, RUNNING)) {
                LockSupport.unpark(writer);
                return;
            }
            if (s == NONE && state.compareAndSet(NONE, RUNNING)) {
                startWriter();
                return;
            }
        }
    }

    private void startWriter() {
        Thread t;
        try {
            t = threads.newThread(this::run);
        } catch (RuntimeException refused) {
            t = null; // a managed thread factory refuses once its application is stopping
        }
        if (t == null) {
            state.set(NONE);
            flush(); // rather than leave a committed message in progress until its lease ends
            return;
        }
        // Named, so that a thread dump or the kernel's per-thread CPU shows the marks' writer as such.
        t.setName(THREAD_NAME);
        writer = t;
        t.start();
    }

    /**
     * Writes what is queued on the calling thread, now. For shutdown: the writer of a stopping
     * application may no longer run. Safe beside a running writer: each completion is taken from the
     * queue by one of them only.
     */
    void flush() {
        for (List<Mark> batch = nextBatch(); !batch.isEmpty(); batch = nextBatch()) {
            write(batch);
        }
    }

    /**
     * Ends the writer: it writes what is queued and stops; marks added later are written on the
     * adding thread. The caller flushes what is left (the writer may never have run).
     */
    void stop() {
        stopped = true;
        Thread t = writer;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** The writer thread: gather, write, park while nothing is queued; end when idle, stopped or interrupted. */
    private void run() {
        boolean handedOver = false;
        try {
            while (!ending()) {
                if (!awaitMark()) {
                    handedOver = true;
                    return;
                }
                LockSupport.parkNanos(this, GATHER_NANOS); // a wake-up left over from an add only shortens one gather
                flush();
            }
        } finally {
            if (!handedOver) {
                // Stopped, interrupted (a managed thread of a stopping application: parking would return at
                // once from now on) or thrown out of a write, all while RUNNING, which only this thread
                // leaves. Marks added meanwhile saw RUNNING and rely on a writer: start the next one.
                state.set(NONE);
                if (!stopped && !pending.isEmpty() && state.compareAndSet(NONE, RUNNING)) {
                    startWriter();
                }
            }
        }
    }

    private boolean ending() {
        return stopped || Thread.currentThread().isInterrupted();
    }

    /**
     * Returns at once when a mark is queued, else parks until one is ({@code true}, the state
     * {@link #RUNNING} again), or ends the writer
     * ({@code false}, the state {@link #NONE}: a mark added from then on starts a writer of its own)
     * after {@link #idleNanos} without a mark, or when stopped or interrupted.
     */
    private boolean awaitMark() {
        state.set(PARKED);
        long deadline = System.nanoTime() + idleNanos;
        while (true) {
            if (state.get() == RUNNING) {
                return true; // an add woke us
            }
            if (!pending.isEmpty()) {
                // Marks added while this writer ran, and an add that saw RUNNING just before the PARKED
                // above and so woke no one: both rely on this look.
                state.compareAndSet(PARKED, RUNNING); // or an add did it already
                return true;
            }
            if (deadline - System.nanoTime() <= 0 || ending()) {
                // Lost only to an add that set RUNNING after the look above: take its mark first.
                return !state.compareAndSet(PARKED, NONE);
            }
            LockSupport.parkNanos(this, deadline - System.nanoTime());
        }
    }

    private List<Mark> nextBatch() {
        List<Mark> batch = new ArrayList<>();
        Mark call;
        while (batch.size() < MAX_BATCH && (call = pending.poll()) != null) {
            batch.add(call);
        }
        return batch;
    }

    private void write(List<Mark> batch) {
        List<ClaimStore.CompleteRequest> requests = new ArrayList<>(batch.size());
        for (Mark call : batch) {
            requests.add(call.completeRequest());
        }
        List<HolderResult> results;
        try {
            results = store.completeAll(requests);
        } catch (ClaimStoreException e) {
            for (Mark call : batch) {
                call.doneNotWritten(e);
            }
            return;
        } catch (RuntimeException e) {
            // Not a store failure the contract allows; still, no call may be left unfinished.
            ClaimStoreException failure = new ClaimStoreException(store.name(), "complete", e);
            for (Mark call : batch) {
                call.doneNotWritten(failure);
            }
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).doneWritten(results.get(i));
        }
    }
}
