package dev.onceonly.internal.ledger;

import dev.onceonly.spi.Ledger;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Deletes ledger rows older than the retention, every purge interval, in batches. Every instance
 * may run it: overlapping runs only wait for each other ({@link Ledger#purge}).
 *
 * <p>Rows a dead letter may still need are kept: while the oldest dead letter (dead-lettered at
 * {@code T}) waits in a dead-letter queue, no row written after {@code T} minus the retention and
 * one interval is deleted, so a replay of it, however late, finds its key's row if the key was
 * processed before it was dead-lettered (the row still existed then) or after. Dead letters whose
 * time is unknown hold nothing back. When the queues cannot be read, the run is skipped.
 */
public final class LedgerPurge implements AutoCloseable {

    private final Ledger ledger;
    private final Duration retention;
    private final Duration interval;
    private final int batchSize;
    private final Clock clock;
    private final Supplier<Optional<Instant>> oldestDeadLetter;
    private final ScheduledFuture<?> schedule;

    /**
     * Schedules the purge on {@code scheduler}, first run one interval from now.
     *
     * @param ledger           the ledger to purge
     * @param retention        rows processed longer ago than this are deleted
     * @param interval         the pause between two runs
     * @param batchSize        about how many rows one transaction deletes
     * @param clock            what "now" is
     * @param scheduler        runs the purge
     * @param oldestDeadLetter when the oldest dead letter waiting in the application's dead-letter
     *                         queues was dead-lettered, empty when none; may throw when they cannot be read
     */
    public LedgerPurge(Ledger ledger, Duration retention, Duration interval, int batchSize, Clock clock,
                       ScheduledExecutorService scheduler, Supplier<Optional<Instant>> oldestDeadLetter) {
        this.ledger = ledger;
        this.retention = retention;
        this.interval = interval;
        this.batchSize = batchSize;
        this.clock = clock;
        this.oldestDeadLetter = oldestDeadLetter;
        long ms = interval.toMillis();
        this.schedule = scheduler.scheduleWithFixedDelay(this::run, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** One run: everything processed before now minus the retention, held back for the oldest dead letter. */
    void run() {
        Instant olderThan = clock.instant().minus(retention);
        Optional<Instant> oldest;
        try {
            oldest = oldestDeadLetter.get();
        } catch (RuntimeException e) {
            LogId.ONCE0805W.log(e.getMessage(), Durations.format(interval));
            return;
        }
        if (oldest.isPresent()) {
            // The row of a key processed before the dead letter still existed when it was dead-lettered:
            // written at most a retention and one purge interval (the purge's lag) before it.
            Instant kept = oldest.get().minus(retention).minus(interval);
            if (kept.isBefore(olderThan)) {
                LogId.ONCE0804I.log(kept, olderThan, oldest.get());
                olderThan = kept;
            }
        }
        try {
            long deleted = ledger.purge(olderThan, batchSize);
            if (deleted > 0) {
                LogId.ONCE0403I.log(deleted, olderThan);
            }
        } catch (RuntimeException e) {
            // Thrown out of a periodic task, it would cancel every later run.
            LogId.ONCE0404W.log(e, Durations.format(interval));
        }
    }

    /** Stops scheduling runs; a run in progress finishes. */
    @Override
    public void close() {
        schedule.cancel(false);
    }
}
