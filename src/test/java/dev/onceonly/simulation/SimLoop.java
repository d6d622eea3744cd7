package dev.onceonly.simulation;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The simulation's one thread, one clock and one random source. Every task any simulated part
 * schedules (a connector's executor, the engine's lease sweep, the broker's deliveries) is queued
 * here with the virtual time it is due at; the loop runs them one at a time in time order. Tasks
 * due together run in an order the seed chooses (each is given a small random lateness), which is
 * where interleavings come from.
 *
 * <p>Code that would block or take time in production (a store round trip, a slow handler, a
 * frozen VM) calls {@link #pause}: the loop runs the other tasks due meanwhile, nested, and returns
 * when the pause is over. So a pause is the point where the rest of the world moves under a call in
 * progress, and an instance that crashed meanwhile never resumes ({@link Crash}).
 */
final class SimLoop {

    /** Most nested pauses: deeper calls take no time (keeps the Java stack and the runs bounded). */
    private static final int MAX_DEPTH = 4;

    final SplittableRandom random;
    final Trace trace;
    private final PriorityQueue<Task> tasks = new PriorityQueue<>();
    private long now;
    private long sequence;
    private int depth;
    private long steps;
    /** The owner of the task running now (innermost, when pauses nest); null between tasks. */
    private Owner running;

    SimLoop(long seed, Trace trace) {
        this.random = new SplittableRandom(seed);
        this.trace = trace;
    }

    /** {@return the virtual time, nanoseconds} */
    long now() {
        return now;
    }

    /** {@return how far ahead of the virtual time the clock of the task running now is, nanoseconds} */
    long skewNow() {
        return running == null ? 0 : running.skewNanos;
    }

    long steps() {
        return steps;
    }

    int pending() {
        return tasks.size();
    }

    /**
     * Queues {@code r} for {@code owner}, due after {@code delayNanos} plus a random lateness of up
     * to {@code jitterNanos}; a task of an owner that died is dropped when its time comes.
     */
    Task schedule(Owner owner, long delayNanos, long jitterNanos, Runnable r) {
        long at = now + Math.max(0, delayNanos) + (jitterNanos > 0 ? random.nextLong(jitterNanos) : 0);
        Task t = new Task(owner, at, sequence++, r);
        tasks.add(t);
        return t;
    }

    /** Runs the next task due by {@code until}; false when there is none. */
    boolean runOne(long until) {
        Task t;
        while ((t = tasks.peek()) != null && t.at <= until) {
            tasks.poll();
            if (t.cancelled || t.owner.dead) {
                continue;
            }
            if (t.owner.frozenUntil > t.at) {
                // Stop-the-world: none of the owner's threads runs before it thaws, in the order they were due.
                tasks.add(new Task(t.owner, t.owner.frozenUntil, sequence++, t.body));
                continue;
            }
            now = Math.max(now, t.at);
            steps++;
            Owner outer = running;
            running = t.owner;
            try {
                t.run();
            } catch (Crash c) {
                // The task's instance died under it: nothing after the crash point ran, as in a dead process.
            } catch (RuntimeException | AssertionError e) {
                // A thread of the real server would log this and lose the work: for the simulation a fault of the code.
                trace.violation("task of " + t.owner + " threw " + e);
                trace.failure(e);
            } finally {
                running = outer;
            }
            return true;
        }
        return false;
    }

    /** Runs every task due by {@code until}, then sets the clock there. */
    void runUntil(long until) {
        while (runOne(until)) {
            // keeps going
        }
        now = Math.max(now, until);
    }

    /**
     * {@code owner}'s call in progress takes {@code nanos}: the world moves meanwhile.
     *
     * @throws Crash when {@code owner} died meanwhile: nothing of a dead process goes on
     */
    void pause(Owner owner, long nanos) {
        if (depth < MAX_DEPTH) {
            depth++;
            try {
                runUntil(now + nanos);
                // A call of an owner frozen meanwhile goes on only once the owner thaws.
                while (owner.frozenUntil > now && !owner.dead) {
                    runUntil(owner.frozenUntil);
                }
            } finally {
                depth--;
            }
        }
        if (owner.dead) {
            throw new Crash(owner);
        }
    }

    /** A random pause of up to {@code maxMicros} for a call that crosses the network. */
    void roundTrip(Owner owner, long maxMicros) {
        pause(owner, TimeUnit.MICROSECONDS.toNanos(1 + random.nextLong(maxMicros)));
    }

    boolean chance(double p) {
        return p > 0 && random.nextDouble() < p;
    }

    <T> T pick(List<T> from) {
        return from.get(random.nextInt(from.size()));
    }

    /** Cancels every task of {@code owner} still queued. */
    void dropAll(Owner owner) {
        List<Task> gone = new ArrayList<>();
        for (Task t : tasks) {
            if (t.owner == owner) {
                gone.add(t);
            }
        }
        tasks.removeAll(gone);
    }

    /** Who a task runs for: an application instance, or the broker/store/database (never dies). */
    static final class Owner {
        final String name;
        volatile boolean dead;
        /** How far ahead (behind, negative) of the virtual time this owner's wall clock is. */
        long skewNanos;
        /** Stop-the-world until this virtual time: none of the owner's tasks or calls in progress runs before it. */
        long frozenUntil;

        Owner(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** An instance died: thrown out of every call of it in progress, caught where its task began. */
    static final class Crash extends Error {
        final transient Owner owner;

        Crash(Owner owner) {
            super(owner.name + " crashed", null, false, false);
            this.owner = owner;
        }
    }

    /** One queued task. */
    static final class Task implements Comparable<Task> {
        final Owner owner;
        final long at;
        final long seq;
        final Runnable body;
        volatile boolean cancelled;
        volatile boolean done;

        Task(Owner owner, long at, long seq, Runnable body) {
            this.owner = owner;
            this.at = at;
            this.seq = seq;
            this.body = body;
        }

        void run() {
            try {
                body.run();
            } finally {
                done = true;
            }
        }

        @Override
        public int compareTo(Task o) {
            int c = Long.compare(at, o.at);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }
}
