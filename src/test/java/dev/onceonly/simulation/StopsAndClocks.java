package dev.onceonly.simulation;

import java.time.Clock;
import java.util.concurrent.TimeUnit;

/**
 * What the simulation does to whole instances beside crashing and stopping them: stop-the-world
 * pauses past the lease (every thread of the instance, its lease sweep and renewals included, waits
 * until it thaws, and a call in progress finishes late), and wall clocks that disagree by a fixed
 * skew per instance, drawn per run.
 */
final class StopsAndClocks {

    /**
     * The runs whose instances' wall clocks disagree, each by a fixed skew of up to {@link #MAX_SKEW_MS}
     * either way: within "a small part of the lease" (5 % of it) that docs/fencing.md and
     * docs/database-only.md ask of the database store's instances, and far within its {@code CLOCK_SKEW}.
     */
    private static final double SKEWED_CLOCKS = 0.5;
    static final long MAX_SKEW_MS = 20;
    /** Chance that a handler's pause past its lease stops its whole instance. */
    private static final double HANDLER_PAUSE_STOPS_THE_WORLD = 0.5;

    private final World w;
    /** Per slot, how far ahead its instances' wall clock is, nanoseconds. */
    private final long[] skew;

    StopsAndClocks(World w, int instances) {
        this.w = w;
        this.skew = new long[instances];
        SimLoop loop = w.loop;
        if (loop.trace.fault(loop.chance(SKEWED_CLOCKS), "the instances' clocks disagree")) {
            SimOperators.count("clocks skewed (runs)");
            for (int i = 0; i < instances; i++) {
                skew[i] = TimeUnit.MILLISECONDS.toNanos(loop.random.nextLong(-MAX_SKEW_MS, MAX_SKEW_MS + 1));
                loop.trace.event("i" + i + "'s clock is " + TimeUnit.NANOSECONDS.toMillis(skew[i]) + " ms ahead");
            }
        }
    }

    /** {@code in} started in {@code slot}: its wall clock runs with the slot's skew. */
    void started(SimInstance in, int slot) {
        in.owner.skewNanos = skew[slot];
    }

    /**
     * The wall clock of the instance whose task runs now (the broker's and the store's own tasks: the
     * virtual time): what the connector stamps dead letters with, the ledger purge and the database
     * store go by.
     */
    Clock instanceClock() {
        return World.clock(() -> w.loop.now() + w.loop.skewNow());
    }

    /** A tick while faults are on: maybe stop the whole of {@code in}. */
    void tick(SimInstance in) {
        if (in.alive() && w.loop.trace.fault(w.loop.chance(w.mode.freezeChance()), "stop-the-world " + in.name)) {
            freeze(in);
        }
    }

    /**
     * The handler of {@code id} on {@code in} pauses past its lease; half the time the whole instance
     * with it (stop-the-world), so that its lease sweep does not renew the claim meanwhile.
     */
    void pauseInHandler(SimInstance in, String id) {
        SimLoop loop = w.loop;
        String paused = in.name + " paused past its lease in the handler of " + id;
        if (loop.trace.fault(loop.chance(w.mode.pauseChance()), paused)) {
            if (loop.trace.fault(loop.chance(HANDLER_PAUSE_STOPS_THE_WORLD),
                    "stop-the-world " + in.name + " in the handler of " + id)) {
                freeze(in);
            }
            loop.pause(in.owner, Mode.LEASE.toNanos() * 3 / 2);
        }
    }

    /** Stops every thread of {@code in} for 1.5 to 3 leases; a call in progress finishes late. */
    private void freeze(SimInstance in) {
        SimOperators.count("stop-the-world pause");
        long until = w.loop.now() + Mode.LEASE.toNanos() * (3 + w.loop.random.nextInt(4)) / 2;
        in.owner.frozenUntil = Math.max(in.owner.frozenUntil, until);
    }
}
