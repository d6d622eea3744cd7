package dev.onceonly.internal.ledger;

import dev.onceonly.spi.Ledger;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Deletes ledger rows older than the retention, every purge interval, in batches. Every instance
 * may run it: overlapping runs only wait for each other ({@link Ledger#purge}).
 */
public final class LedgerPurge implements AutoCloseable {

    private final Ledger ledger;
    private final Duration retention;
    private final Duration interval;
    private final int batchSize;
    private final Clock clock;
    private final ScheduledFuture<?> schedule;

    /**
     * Schedules the purge on {@code scheduler}, first run one interval from now.
     *
     * @param ledger    the ledger to purge
     * @param retention rows processed longer ago than this are deleted
     * @param interval  the pause between two runs
     * @param batchSize about how many rows one transaction deletes
     * @param clock     what "now" is
     * @param scheduler runs the purge
     */
    public LedgerPurge(Ledger ledger, Duration retention, Duration interval, int batchSize, Clock clock,
                       ScheduledExecutorService scheduler) {
        this.ledger = ledger;
        this.retention = retention;
        this.interval = interval;
        this.batchSize = batchSize;
        this.clock = clock;
        long ms = interval.toMillis();
        this.schedule = scheduler.scheduleWithFixedDelay(this::run, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** One run: everything processed before now minus the retention. */
    void run() {
        Instant olderThan = clock.instant().minus(retention);
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
