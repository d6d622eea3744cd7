package dev.onceonly.internal.redis;

import dev.onceonly.spi.HolderResult;
import dev.onceonly.internal.support.LogId;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Redis store's replication window: the {@code WAIT} after completions, and the count and log
 * of completions the replicas did not acknowledge in time.
 *
 * <p>Redis replicates asynchronously: a key marked done on a master that fails before its replica
 * got the write is gone after the fail-over, and a later copy of the message finds no claim (the
 * ledger, when configured, still stops it). With {@code waitReplicas > 0} every completion that
 * changed the key is followed by Redis {@code WAIT waitReplicas waitTimeout} on the very connection
 * that wrote it (WAIT only counts that connection's writes, and a Lua script cannot call it),
 * pipelined with the script: one round trip. A completion the replicas did not acknowledge in time
 * is still reported {@link HolderResult#APPLIED} — the key is done on the master, and failing it
 * would make the engine retry a write that succeeded — but is counted ({@link #unconfirmedCompletions()})
 * and logged (ONCE0109W, at most once a minute). Claims are not waited for: a claim lost in a
 * fail-over lets a concurrent copy run too, which only the ledger can stop in any case, and a claim
 * lives for one lease; a completion is what stops copies for the whole retention.
 *
 * <p>Contract: thread-safe; never turns an applied completion into a failure.
 */
final class ReplicaWait {

    private static final long REPORT_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** Replicas that must acknowledge a completion; 0: WAIT is not used. */
    private final int replicas;
    private final long timeoutMillis;
    private final AtomicLong unconfirmed = new AtomicLong();
    /** Unconfirmed completions not yet logged, and when ONCE0109W was last logged (nanoTime). */
    private final AtomicLong unreported = new AtomicLong();
    private final AtomicLong lastReport = new AtomicLong(System.nanoTime() - REPORT_EVERY_NANOS);

    /**
     * The outcome of one completion.
     *
     * @param result    what the store's {@code complete} reports
     * @param replicas  how many replicas acknowledged the write within the wait timeout; -1 when not
     *                  asked (WAIT off, or nothing was written by this call)
     * @param confirmed whether the write is known to be on {@code waitReplicas} replicas (always
     *                  false with WAIT off)
     */
    record Completion(HolderResult result, int replicas, boolean confirmed) {
    }

    /**
     * @param replicas replicas that must acknowledge a completion (Redis {@code WAIT}); 0 not to wait
     * @param timeout  how long a completion waits for them at most
     * @throws IllegalArgumentException if {@code replicas} is negative
     */
    ReplicaWait(int replicas, Duration timeout) {
        if (replicas < 0) {
            throw new IllegalArgumentException("waitReplicas must not be negative: " + replicas);
        }
        this.replicas = replicas;
        this.timeoutMillis = timeout.toMillis();
    }

    /** {@return whether completions are followed by {@code WAIT}} */
    boolean enabled() {
        return replicas > 0;
    }

    /** Sends {@code WAIT} into {@code p}, routed by {@code key} (a cluster pipeline's key), after the writes it counts. */
    Response<Long> send(Pipeline p, String key) {
        return p.waitReplicas(key, replicas, timeoutMillis);
    }

    /** Sends {@code WAIT} into {@code p} (one master's connection), after the writes it counts. */
    Response<Long> send(Pipeline p) {
        return p.waitReplicas(replicas, timeoutMillis);
    }

    /**
     * WAIT's answer; -1 when it was refused (an ACL without {@code +wait}, a node that just became a
     * replica): the write was applied all the same, and is then reported unconfirmed, not failed.
     */
    static int acknowledged(Response<Long> wait) {
        try {
            return wait.get().intValue();
        } catch (JedisDataException refused) {
            return -1;
        }
    }

    /**
     * A completion's outcome from its result and WAIT's answer; counts and logs one that replicas did not confirm.
     *
     * @param acknowledged WAIT's answer when this completion changed the key, else -1
     */
    Completion completion(HolderResult result, int acknowledged) {
        boolean confirmed = replicas > 0 && acknowledged >= replicas;
        if (replicas > 0 && result == HolderResult.APPLIED && !confirmed) {
            unconfirmed(acknowledged);
        }
        return new Completion(result, acknowledged, confirmed);
    }

    /**
     * {@return completions since start that fewer than {@code waitReplicas} replicas acknowledged in
     * time (0 with WAIT off)}
     */
    long unconfirmedCompletions() {
        return unconfirmed.get();
    }

    private void unconfirmed(int acknowledged) {
        unconfirmed.incrementAndGet();
        unreported.incrementAndGet();
        long last = lastReport.get();
        long now = System.nanoTime();
        // One line a minute at most: with a replica down, every completion falls short.
        if (now - last >= REPORT_EVERY_NANOS && lastReport.compareAndSet(last, now)) {
            LogId.ONCE0109W.log(unreported.getAndSet(0), replicas, timeoutMillis,
                    acknowledged < 0 ? "unknown (reply lost, written on retry)" : acknowledged + " acknowledged");
        }
    }
}
