package dev.onceonly.engine;

import dev.onceonly.spi.OutboxListener;
import dev.onceonly.spi.OutboxPublisher;
import dev.onceonly.spi.OutboxRecord;
import dev.onceonly.spi.OutboxStore;
import dev.onceonly.support.Durations;
import dev.onceonly.support.LogId;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Publishes outbox rows: right after their transaction committed (the fast path, on {@code executor})
 * and, every sweep interval, whatever is still pending after {@code sweepAfter} (rows of an instance
 * that died, or that the broker could not take then). Every publish happens inside
 * {@link OutboxStore#relay}, which holds the rows locked until they are marked, so relays of several
 * instances never publish one row at the same time.
 *
 * <p>Order: rows of one source (one guarded message) are published one after the other, each after
 * the previous one's confirm; when one is refused or cannot be published, the later rows of that
 * source wait for the next round. A row refused {@code maxAttempts} times is parked, and the rows
 * after it go on.
 */
public final class OutboxRelay implements AutoCloseable {

    /**
     * How the relay runs.
     *
     * @param sweepInterval pause between two sweeps
     * @param sweepAfter    the sweep takes rows written longer ago than this (the fast path should
     *                      have published them by then)
     * @param batchSize     rows per relay transaction
     * @param maxAttempts   broker refusals after which a row is parked
     * @param retention     sent rows are deleted this long after they were sent
     * @param confirmWait   how long a relay transaction waits for the broker's confirms
     */
    public record Settings(Duration sweepInterval, Duration sweepAfter, int batchSize, int maxAttempts, Duration retention,
                           Duration confirmWait) {
    }

    private final OutboxStore store;
    private final OutboxPublisher publisher;
    private final Settings settings;
    private final Clock clock;
    private final Executor executor;
    private final OutboxListener listener;
    private final ConcurrentLinkedQueue<Long> committed = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    /** When ({@link System#nanoTime()}) each row waiting in {@link #committed} was committed, for the latency the listener gets. */
    private final Map<Long, Long> committedAt = new ConcurrentHashMap<>();
    private final ScheduledFuture<?> sweeps;
    private volatile boolean closed;
    /** Pending and parked rows as the last sweep counted them; null before the first count. */
    private volatile OutboxStore.Counts counts;

    /**
     * Schedules the sweep on {@code scheduler}, the first one at once (rows an earlier run of this
     * instance left are published at startup).
     *
     * @param store     the outbox table
     * @param publisher the broker
     * @param settings  how it runs
     * @param clock     what "now" is
     * @param executor  runs the fast path
     * @param scheduler runs the sweeps
     * @param listener  told what was relayed
     */
    public OutboxRelay(OutboxStore store, OutboxPublisher publisher, Settings settings, Clock clock, Executor executor,
                       ScheduledExecutorService scheduler, OutboxListener listener) {
        this.store = store;
        this.publisher = publisher;
        this.settings = settings;
        this.clock = clock;
        this.executor = executor;
        this.listener = listener;
        long ms = settings.sweepInterval().toMillis();
        this.sweeps = scheduler.scheduleWithFixedDelay(this::sweep, 0, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * The fast path: rows a transaction just committed. Returns at once; one worker at a time
     * publishes whatever has been committed meanwhile, in batches.
     *
     * @param rows the committed rows' ids
     */
    public void committed(List<Long> rows) {
        long now = System.nanoTime();
        rows.forEach(id -> committedAt.put(id, now));
        committed.addAll(rows);
        startDrain();
    }

    /** Starts the worker unless one runs (or the relay is closed). */
    private void startDrain() {
        if (!closed && draining.compareAndSet(false, true)) {
            try {
                executor.execute(this::drain);
            } catch (RuntimeException rejected) {
                // The executor refuses while the application stops: the sweep of the next start takes them.
                draining.set(false);
            }
        }
    }

    private void drain() {
        try {
            while (!closed) {
                List<Long> batch = new ArrayList<>();
                for (Long id; batch.size() < settings.batchSize() && (id = committed.poll()) != null; ) {
                    batch.add(id);
                }
                if (batch.isEmpty()) {
                    break;
                }
                try {
                    relay(OutboxStore.Selection.of(batch), false);
                } finally {
                    batch.forEach(committedAt::remove);
                }
            }
        } catch (RuntimeException e) {
            // The rows stay pending: the sweep publishes them.
            LogId.ONCE0602W.log("fast path", e.getClass().getSimpleName() + ": " + e.getMessage());
        } finally {
            draining.set(false);
        }
        // A commit that came in after the last poll and saw the worker still running is not left behind.
        if (!committed.isEmpty()) {
            startDrain();
        }
    }

    /** {@return pending and parked rows as the last sweep counted them, if it did} */
    public Optional<OutboxStore.Counts> lastCounts() {
        return Optional.ofNullable(counts);
    }

    /** One sweep: pending rows older than {@code sweepAfter}, batch after batch; then the purge and the counts. */
    private void sweep() {
        try {
            Instant before = clock.instant().minus(settings.sweepAfter());
            // Another batch only after a full batch that all went out: rows the broker does not
            // confirm now (or, while it is unreachable, none) would otherwise be taken again and again.
            int sent;
            do {
                sent = relay(OutboxStore.Selection.oldest(before, settings.batchSize()), true);
            } while (sent >= settings.batchSize() && !closed);
            long purged = store.purge(clock.instant().minus(settings.retention()), settings.batchSize());
            if (purged > 0) {
                LogId.ONCE0604I.log(purged);
            }
            OutboxStore.Counts now = store.counts();
            counts = now;
            listener.counted(now);
        } catch (RuntimeException e) {
            // Thrown out of a periodic task, it would cancel every later sweep.
            LogId.ONCE0602W.log("sweep", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /** @return how many rows were published and confirmed */
    private int relay(OutboxStore.Selection selection, boolean sweep) {
        if (!publisher.connected()) {
            return 0; // nothing would go out: leave the rows to a sweep once the broker is back
        }
        int[] sent = new int[1];
        store.relay(selection, rows -> {
            Map<Long, Optional<OutboxStore.Failure>> answers = publish(rows, sweep);
            sent[0] = (int) answers.values().stream().filter(Optional::isEmpty).count();
            return answers;
        }, settings.maxAttempts(), clock.instant());
        return sent[0];
    }

    /**
     * Publishes the rows, sources side by side, each source's rows one after the other; waits for
     * every answer up to {@code confirmWait}.
     */
    private Map<Long, Optional<OutboxStore.Failure>> publish(List<OutboxRecord> rows, boolean sweep) {
        Map<String, List<OutboxRecord>> bySource = new LinkedHashMap<>();
        rows.forEach(r -> bySource.computeIfAbsent(r.source(), s -> new ArrayList<>()).add(r));
        Map<Long, Optional<OutboxStore.Failure>> answers = new ConcurrentHashMap<>();
        Map<Long, Long> confirmedAt = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> chains = new ArrayList<>();
        for (List<OutboxRecord> source : bySource.values()) {
            CompletableFuture<Boolean> chain = CompletableFuture.completedFuture(true);
            for (OutboxRecord row : source) {
                chain = chain.thenCompose(goOn -> goOn ? publishOne(row, answers, confirmedAt) : CompletableFuture.completedFuture(false));
            }
            chains.add(chain.thenApply(x -> null));
        }
        try {
            CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new))
                    .get(settings.confirmWait().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LogId.ONCE0602W.log(sweep ? "sweep" : "fast path", "no answer from the broker within "
                    + Durations.format(settings.confirmWait()) + "; the unanswered rows stay pending");
        } catch (ExecutionException e) {
            // Each chain records its own failures; none is thrown out of it.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Only what was answered in time is marked: a late confirm of a row left pending means one more publish of it.
        Map<Long, Optional<OutboxStore.Failure>> answered = Map.copyOf(answers);
        int sent = 0;
        List<Duration> latencies = new ArrayList<>();
        for (OutboxRecord row : rows) {
            Optional<OutboxStore.Failure> a = answered.get(row.id());
            if (a == null) {
                continue;
            }
            if (a.isEmpty()) {
                sent++;
                Long committedNanos = committedAt.get(row.id());
                // A swept row's commit time is unknown here: from its write, on the clock that wrote it.
                latencies.add(committedNanos != null ? Duration.ofNanos(Math.max(0, confirmedAt.get(row.id()) - committedNanos))
                        : Duration.between(row.createdAt(), clock.instant()));
            } else {
                boolean parked = row.attempts() + 1 >= settings.maxAttempts();
                LogId.ONCE0603W.log(row.messageId(), a.get().reason(), row.attempts() + 1, settings.maxAttempts(),
                        parked ? "parked" : "will be tried again");
                listener.refused(parked);
            }
        }
        if (sent > 0) {
            listener.relayed(sent, sweep, latencies.toArray(Duration[]::new));
        }
        return answered;
    }

    /** @return whether the source's next row may go: this one was confirmed */
    private CompletableFuture<Boolean> publishOne(OutboxRecord row, Map<Long, Optional<OutboxStore.Failure>> answers,
                                                  Map<Long, Long> confirmedAt) {
        CompletableFuture<Void> confirm;
        try {
            confirm = publisher.publish(row);
        } catch (RuntimeException e) {
            confirm = CompletableFuture.failedFuture(e);
        }
        return confirm.handle((ok, failure) -> {
            if (failure == null) {
                confirmedAt.put(row.id(), System.nanoTime());
                answers.put(row.id(), Optional.empty());
                return true;
            }
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            if (cause instanceof OutboxPublisher.Refused refused) {
                answers.put(row.id(), OutboxStore.Failure.refused(refused.getMessage()));
            }
            // Anything else (connection lost, no confirm in time) is not the row's fault: it stays pending.
            return false;
        });
    }

    /**
     * Stops the sweeps and waits up to {@code confirmWait} for a fast path in progress; rows left
     * pending are swept at the next start (or by another instance).
     */
    @Override
    public void close() {
        closed = true;
        sweeps.cancel(false);
        long deadline = System.nanoTime() + settings.confirmWait().toNanos();
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
