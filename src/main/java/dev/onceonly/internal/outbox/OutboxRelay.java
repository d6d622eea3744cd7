package dev.onceonly.internal.outbox;

import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Publishes outbox rows: right after their transaction committed (the fast path, on {@code executor})
 * and, every sweep interval, whatever is still pending after {@code sweepAfter} (rows of an instance
 * that died, or that the broker could not take then). Every publish happens inside
 * {@link OutboxStore#relay}, which holds the rows locked until they are marked, and no publish
 * starts once the relay transaction stopped waiting for confirms ({@link SourceChains}), so relays
 * of several instances never publish one row at the same time.
 *
 * <p>Order: rows of one source (one guarded message) are published one after the other, each after
 * the previous one's confirm; when one is refused or cannot be published, the later rows of that
 * source wait for the next round. The store hands out a row only with every earlier pending row of
 * its source, so this holds across batches, fast path and sweep, and instances. A row refused
 * {@code maxAttempts} times is parked, and the rows after it go on.
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
     * @param gather        the least time from the end of one fast-path transaction to the start of
     *                      the next, unless a whole batch waits; zero: no wait
     */
    public record Settings(Duration sweepInterval, Duration sweepAfter, int batchSize, int maxAttempts, Duration retention,
                           Duration confirmWait, Duration gather) {
    }

    private final OutboxStore store;
    private final OutboxPublisher publisher;
    private final Settings settings;
    private final Clock clock;
    private final OutboxListener listener;
    private final FastPath fastPath;
    /** When ({@link System#nanoTime()}) each row waiting for the fast path was committed, for the latency the listener gets. */
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
        this.listener = listener;
        this.fastPath = new FastPath(settings.batchSize(), settings.gather(), clock, executor, scheduler, this::relayCommitted);
        long ms = settings.sweepInterval().toMillis();
        this.sweeps = scheduler.scheduleWithFixedDelay(this::sweep, 0, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * The fast path: rows a transaction just committed. Returns at once; one worker at a time
     * publishes whatever has been committed meanwhile, in batches, gathering them under load
     * ({@link FastPath}).
     *
     * @param rows the committed rows' ids
     */
    public void committed(List<Long> rows) {
        long now = System.nanoTime();
        rows.forEach(id -> committedAt.put(id, now));
        fastPath.committed(rows);
    }

    /** {@return how many committed rows' ids wait in the fast path for its worker (a read for checks, no decision)} */
    int fastPathQueued() {
        return fastPath.queued();
    }

    /**
     * {@return how many rows handed to the fast path it has not relayed yet, by the commit times kept
     * for their latency (a read for checks, no decision)}
     */
    int committedNotRelayed() {
        return committedAt.size();
    }

    /** The fast path's relay of rows just committed. */
    private void relayCommitted(List<Long> batch) {
        try {
            relay(OutboxStore.Selection.of(batch), false);
        } finally {
            batch.forEach(committedAt::remove);
        }
    }

    /** {@return pending and parked rows as the last sweep counted them, if it did} */
    public Optional<OutboxStore.Counts> lastCounts() {
        return Optional.ofNullable(counts);
    }

    /** One sweep: pending rows older than {@code sweepAfter}, page after page; then the purge and the counts. */
    private void sweep() {
        try {
            Instant before = clock.instant().minus(settings.sweepAfter());
            // Pages by id, so rows held back or refused in one page are not taken again in the next;
            // another page only after a full one in which the broker answered every row it was asked
            // for: while it does not (or is unreachable), more pages would only wait as long.
            Page page = new Page(OutboxStore.Relayed.NONE, false);
            do {
                page = relay(OutboxStore.Selection.oldest(before, page.relayed().lastId(), settings.batchSize()), true);
            } while (page.relayed().locked() >= settings.batchSize() && !page.stalled() && !closed);
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

    /**
     * One relay transaction.
     *
     * @param relayed what the store locked
     * @param stalled the broker did not answer every row it was asked for in time
     */
    private record Page(OutboxStore.Relayed relayed, boolean stalled) {
    }

    private Page relay(OutboxStore.Selection selection, boolean sweep) {
        if (!publisher.connected()) {
            return new Page(OutboxStore.Relayed.NONE, true); // nothing would go out: leave the rows to a sweep once the broker is back
        }
        boolean[] stalled = new boolean[1];
        OutboxStore.Relayed relayed = store.relay(selection, rows -> {
            SourceChains.Outcome outcome = SourceChains.publish(publisher, rows, settings.confirmWait());
            stalled[0] = outcome.stalled();
            report(rows, outcome, sweep);
            return outcome.answers();
        }, settings.maxAttempts(), clock.instant());
        return new Page(relayed, stalled[0]);
    }

    /** Logs refusals and a wait without answers, and tells the listener. */
    private void report(List<OutboxRecord> rows, SourceChains.Outcome outcome, boolean sweep) {
        if (outcome.timedOut()) {
            LogId.ONCE0602W.log(sweep ? "sweep" : "fast path", "no answer from the broker within "
                    + Durations.format(settings.confirmWait()) + "; the unanswered rows stay pending");
        }
        // Only what was answered in time is marked: a late confirm of a row left pending means one more publish of it.
        int sent = 0;
        List<Duration> latencies = new ArrayList<>();
        for (OutboxRecord row : rows) {
            Optional<OutboxStore.Failure> a = outcome.answers().get(row.id());
            if (a == null) {
                continue;
            }
            if (a.isEmpty()) {
                sent++;
                Long committedNanos = committedAt.get(row.id());
                // A swept row's commit time is unknown here: from its write, on the clock that wrote it.
                latencies.add(committedNanos != null
                        ? Duration.ofNanos(Math.max(0, outcome.confirmedAt().get(row.id()) - committedNanos))
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
    }

    /**
     * Stops the sweeps and waits up to {@code confirmWait} for a fast path in progress; rows left
     * pending are swept at the next start (or by another instance).
     */
    @Override
    public void close() {
        closed = true;
        sweeps.cancel(false);
        fastPath.close(settings.confirmWait());
    }
}
