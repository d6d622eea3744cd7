package dev.onceonly.internal.engine;

import dev.onceonly.internal.support.LogId;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Keeps the leases of running handlers alive: one periodic sweep for every held claim, rather than
 * a scheduled task per message. Scheduling and cancelling a task per message woke the scheduler's
 * thread every time, which cost a guarded message on Redis about 13 us of its ~75 (BENCHMARKS.md).
 *
 * <p>The sweep runs every sixth of the shortest lease seen so far and renews each claim that would
 * otherwise go more than a third of its lease without renewal before the next run: renewals come
 * every lease/6 to lease/3, never later. Each renewal runs as a task of its own on the scheduler.
 */
final class LeaseSweep {

    /** A claim the sweep renews. */
    interface Lease {
        /** When the lease is next due for renewal (on the sweep's clock, {@link LeaseSweep#now()}). */
        long renewAtNanos();

        /** Renews the lease now; reports a lost claim itself. Must not throw for a store failure. */
        void renew(long nowNanos);

        /** Consumer and key digest, for the log line of an unexpected failure. */
        String consumer();

        String keyDigest();
    }

    private final ScheduledExecutorService scheduler;
    /** The time leases are due by: {@link System#nanoTime()}, or a simulation's virtual clock. */
    private final LongSupplier nanoClock;
    private final Set<Lease> held = ConcurrentHashMap.newKeySet();
    /** Leases whose renewal task is still running: never two at once for one lease. */
    private final Set<Lease> renewing = ConcurrentHashMap.newKeySet();
    private final Object lock = new Object();
    /** Period of the running sweep. */
    private volatile long periodMillis = Long.MAX_VALUE;
    private ScheduledFuture<?> sweep; // guarded by lock
    private boolean stopped; // guarded by lock

    /**
     * @param scheduler runs the sweep; must not be used for long work
     * @param nanoClock the time renewals are due by, in the units of {@link System#nanoTime()}; the
     *                  scheduler's own delays must pass in the same time
     */
    LeaseSweep(ScheduledExecutorService scheduler, LongSupplier nanoClock) {
        this.scheduler = scheduler;
        this.nanoClock = nanoClock;
    }

    /** {@return now, on the clock renewals are due by} */
    long now() {
        return nanoClock.getAsLong();
    }

    /** Renews {@code lease} from now on, until {@link #drop}. */
    void hold(Lease lease, Duration duration) {
        held.add(lease);
        runAtLeastEverySixthOf(duration);
    }

    /** @return whether the lease was still held (and now is not) */
    boolean drop(Lease lease) {
        return held.remove(lease);
    }

    /** {@return how many leases it renews now: held and not yet dropped (a read for checks, no decision)} */
    int held() {
        return held.size();
    }

    /** Milliseconds between two sweeps: a failed renewal is retried after that. */
    long periodMillis() {
        return periodMillis;
    }

    /** Cancels the sweep; leases still held lapse after their duration. */
    void stop() {
        synchronized (lock) {
            stopped = true;
            if (sweep != null) {
                sweep.cancel(false);
            }
        }
    }

    private void runAtLeastEverySixthOf(Duration lease) {
        long period = Math.max(1, lease.toMillis() / 6);
        if (period >= periodMillis) {
            return;
        }
        synchronized (lock) {
            if (period < periodMillis && !stopped) {
                if (sweep != null) {
                    sweep.cancel(false);
                }
                sweep = scheduler.scheduleAtFixedRate(this::renewDue, period, period, TimeUnit.MILLISECONDS);
                periodMillis = period;
            }
        }
    }

    private void renewDue() {
        long now = nanoClock.getAsLong();
        long period = TimeUnit.MILLISECONDS.toNanos(periodMillis);
        for (Lease lease : held) {
            if (now - lease.renewAtNanos() >= -period && renewing.add(lease)) {
                // Each renewal a task of its own: a store node that is slow to answer holds up only
                // the renewals waiting on it, not every lease behind it in the sweep.
                try {
                    scheduler.execute(() -> renew(lease, now));
                } catch (RejectedExecutionException e) {
                    renewing.remove(lease); // stopping
                }
            }
        }
    }

    private void renew(Lease lease, long now) {
        try {
            lease.renew(now);
        } catch (RuntimeException e) {
            // Reported here: a failed renewal is tried again at the next sweep.
            LogId.ONCE0202W.log(lease.consumer(), lease.keyDigest(), e, periodMillis);
        } finally {
            renewing.remove(lease);
        }
    }
}
