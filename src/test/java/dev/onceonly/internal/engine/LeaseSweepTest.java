package dev.onceonly.internal.engine;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sweep on a clock the test holds still: which leases fall due is decided on that clock alone,
 * while the scheduler's own (real) periods only make the sweep run.
 */
class LeaseSweepTest {

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final LeaseSweep sweep = new LeaseSweep(scheduler, clock::get);

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    /** A lease due at a fixed time that counts its renewals. */
    private static final class Counted implements LeaseSweep.Lease {
        final long due;
        final AtomicInteger renewals = new AtomicInteger();

        Counted(long due) {
            this.due = due;
        }

        @Override
        public long renewAtNanos() {
            return due;
        }

        @Override
        public void renew(long nowNanos) {
            renewals.incrementAndGet();
        }

        @Override
        public String consumer() {
            return "orders";
        }

        @Override
        public String keyDigest() {
            return "d";
        }
    }

    @Test
    void theSweepRunsEverySixthOfTheShortestLeaseSeen() {
        assertEquals(Long.MAX_VALUE, sweep.periodMillis(), "no sweep before the first lease");
        sweep.hold(new Counted(Long.MAX_VALUE), Duration.ofMillis(600));
        assertEquals(100, sweep.periodMillis());
        sweep.hold(new Counted(Long.MAX_VALUE), Duration.ofMillis(6_000));
        assertEquals(100, sweep.periodMillis(), "a longer lease does not slow it down");
        sweep.hold(new Counted(Long.MAX_VALUE), Duration.ofMillis(60));
        assertEquals(10, sweep.periodMillis());
        sweep.hold(new Counted(Long.MAX_VALUE), Duration.ofMillis(3));
        assertEquals(1, sweep.periodMillis(), "never below a millisecond");
    }

    /** Renewed when due within the next period (a sweep later would be too late), not before. */
    @Test
    void aLeaseIsRenewedWhenItFallsDueBeforeTheNextSweep() throws Exception {
        long period = TimeUnit.MILLISECONDS.toNanos(10);
        Counted dueNow = new Counted(clock.get());
        Counted dueAtNextSweep = new Counted(clock.get() + period);
        Counted dueLater = new Counted(clock.get() + period + 1);
        sweep.hold(dueNow, Duration.ofMillis(60));
        sweep.hold(dueAtNextSweep, Duration.ofMillis(60));
        sweep.hold(dueLater, Duration.ofMillis(60));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((dueNow.renewals.get() < 3 || dueAtNextSweep.renewals.get() < 3) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(dueNow.renewals.get() >= 3);
        assertTrue(dueAtNextSweep.renewals.get() >= 3);
        assertEquals(0, dueLater.renewals.get());
    }

    /**
     * A shorter lease replaces the sweep rather than adding one: two sweeps would renew every lease
     * twice as often, each renewal a round trip. Stopping cancels the one left.
     */
    @Test
    void aFasterSweepReplacesTheSlowerOneAndStopCancelsIt() {
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1);
        pool.setRemoveOnCancelPolicy(true);
        try {
            LeaseSweep own = new LeaseSweep(pool, clock::get);
            own.hold(new Counted(Long.MAX_VALUE), Duration.ofSeconds(60));
            own.hold(new Counted(Long.MAX_VALUE), Duration.ofSeconds(6));
            assertEquals(1, pool.getQueue().size(), "one sweep, every second");
            own.stop();
            assertEquals(0, pool.getQueue().size());
        } finally {
            pool.shutdownNow();
        }
    }

    /** An engine closed before its first message stops a sweep that never started. */
    @Test
    void aSweepThatNeverRanStops() {
        sweep.stop();
        sweep.hold(new Counted(clock.get()), Duration.ofMillis(60));
        assertEquals(Long.MAX_VALUE, sweep.periodMillis(), "and starts none afterwards");
    }

    @Test
    void aDroppedOrStoppedLeaseIsNoLongerRenewed() throws Exception {
        Counted dropped = new Counted(clock.get());
        sweep.hold(dropped, Duration.ofMillis(60));
        assertTrue(sweep.drop(dropped));
        assertFalse(sweep.drop(dropped), "dropped once");
        Counted held = new Counted(clock.get());
        sweep.hold(held, Duration.ofMillis(60));
        sweep.stop();
        int renewals = held.renewals.get();
        sweep.hold(new Counted(clock.get()), Duration.ofMillis(6));
        Thread.sleep(200);
        assertEquals(0, dropped.renewals.get());
        assertTrue(held.renewals.get() <= renewals + 1, "at most a renewal that was under way");
        assertEquals(10, sweep.periodMillis(), "a stopped sweep starts no faster one");
    }
}
