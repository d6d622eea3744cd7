package dev.onceonly.internal.redis;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Guarded-claim traffic against one store while a fault is injected: threads claim fresh keys and
 * complete them, and now and then claim a key completed earlier again (a duplicate, which must be
 * seen as done). Records every operation's time and result, then checks every completed key on the
 * topology as it is after the fault (through the store, so on whatever master owns it now).
 */
final class ClaimLoad implements AutoCloseable {

    static final Duration LEASE = Duration.ofSeconds(30);
    static final Duration RETENTION = Duration.ofMinutes(10);

    private final RedisClaimStore store;
    private final String prefix;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;
    private final long started = System.nanoTime();
    private volatile long faultAt;

    private final AtomicLong attempted = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong failedAfterFault = new AtomicLong();
    private final AtomicLong unexpected = new AtomicLong();
    private final AtomicLong duplicatesAdmitted = new AtomicLong();
    private final AtomicLong duplicatesBusy = new AtomicLong();
    private final AtomicLong claimsLost = new AtomicLong();
    private final AtomicLong firstFailureAfterFault = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong lastFailure = new AtomicLong(Long.MIN_VALUE);
    /** Start times of successful operations; for the first success after the last failure. */
    private final ConcurrentLinkedQueue<Long> successes = new ConcurrentLinkedQueue<>();
    /** Completed keys (complete answered APPLIED) → whether the replicas confirmed the write. */
    private final Map<String, Boolean> completed = new ConcurrentHashMap<>();
    private final List<String> completedOrder = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final AtomicLong sequence = new AtomicLong();

    ClaimLoad(RedisClaimStore store, String prefix, int threadCount) {
        this.store = store;
        this.prefix = prefix;
        for (int i = 0; i < threadCount; i++) {
            Thread t = new Thread(this::run, "claim-load-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    /** Marks now as the moment of the fault. */
    void fault() {
        failedAtFault = failed.get();
        faultAt = System.nanoTime();
    }

    private volatile long failedAtFault;

    /** {@return operations failed since the last {@link #fault()}, and the ms from it to the last failure (-1: none)} */
    long[] sinceFault() {
        long last = lastFailure.get();
        long fault = faultAt;
        return new long[] {failed.get() - failedAtFault, last >= fault ? TimeUnit.NANOSECONDS.toMillis(last - fault) : -1};
    }

    private void run() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (running) {
            String key = prefix + sequence.incrementAndGet();
            String token = Long.toHexString(random.nextLong());
            if (op(() -> {
                if (store.claim(key, token, "fp", LEASE).state() != ClaimState.ACQUIRED) {
                    unexpected.incrementAndGet();
                    return false;
                }
                return true;
            })) {
                op(() -> {
                    ReplicaWait.Completion c = store.completeReplicated(key, token, "fp", RETENTION);
                    if (c.result() != HolderResult.APPLIED) {
                        // The claim itself was lost in a fail-over (written on the old master only).
                        claimsLost.incrementAndGet();
                        return false;
                    }
                    completed.put(key, c.confirmed());
                    completedOrder.add(key);
                    return true;
                });
            }
            int n = completedOrder.size();
            if (n > 0 && random.nextInt(4) == 0) {
                String earlier = completedOrder.get(random.nextInt(n));
                op(() -> {
                    ClaimResult r = store.claim(earlier, "dup" + random.nextLong(), "fp", LEASE);
                    if (r.state() == ClaimState.ACQUIRED) {
                        // The completion was lost (the replication window): this copy would run again.
                        duplicatesAdmitted.incrementAndGet();
                    } else if (r.equals(ClaimResult.inProgress("fp"))) {
                        // The claim reached the new master, its completion did not: the window too.
                        duplicatesBusy.incrementAndGet();
                    } else if (!r.equals(ClaimResult.done("fp"))) {
                        unexpected.incrementAndGet();
                    }
                    return true;
                });
            }
            try {
                // Paced, so that two cores still leave the Redis processes and sentinels their time.
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private interface Op {
        boolean run();
    }

    private boolean op(Op op) {
        long start = System.nanoTime();
        attempted.incrementAndGet();
        try {
            boolean ok = op.run();
            successes.add(start);
            return ok;
        } catch (ClaimStoreException e) {
            failed.incrementAndGet();
            long fault = faultAt;
            // By when it failed: an operation in flight at the fault fails because of it.
            if (fault != 0 && System.nanoTime() >= fault) {
                failedAfterFault.incrementAndGet();
                firstFailureAfterFault.accumulateAndGet(Math.max(start, fault), Math::min);
            }
            lastFailure.accumulateAndGet(start, Math::max);
            return false;
        }
    }

    /** Stops the threads and waits for them. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    /** What the load saw; call after {@link #close()}. */
    Report report() {
        long fault = faultAt;
        long last = lastFailure.get();
        long recovered = -1;
        if (fault != 0) {
            long from = last >= fault ? last : fault;
            recovered = successes.stream().filter(s -> s > from).mapToLong(s -> s).min().orElse(-1);
        }
        long windowHits = 0;
        long confirmedHits = 0;
        long confirmed = 0;
        for (Map.Entry<String, Boolean> e : completed.entrySet()) {
            if (e.getValue()) {
                confirmed++;
            }
            ClaimResult now = store.claim(e.getKey(), "verify", "fp", LEASE);
            if (!now.equals(ClaimResult.done("fp"))) {
                if (windowHits < 5) {
                    // A few of the lost keys, to see where the window was (slot, position in the run).
                    System.out.println("LOST " + e.getKey() + " slot " + redis.clients.jedis.util.JedisClusterCRC16.getSlot(e.getKey())
                            + " now " + now + " completed #" + completedOrder.indexOf(e.getKey()) + " of " + completedOrder.size());
                }
                windowHits++;
                if (e.getValue()) {
                    confirmedHits++;
                }
            }
        }
        return new Report(attempted.get(), failed.get(), failedAfterFault.get(), unexpected.get(), completed.size(), confirmed,
                windowHits, confirmedHits, duplicatesAdmitted.get(), duplicatesBusy.get(), claimsLost.get(),
                fault == 0 || firstFailureAfterFault.get() == Long.MAX_VALUE ? -1 : TimeUnit.NANOSECONDS.toMillis(firstFailureAfterFault.get() - fault),
                fault == 0 || last < fault ? -1 : TimeUnit.NANOSECONDS.toMillis(last - fault),
                recovered < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(recovered - fault),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }

    /**
     * @param attempted            operations started (claims, completions, duplicate claims)
     * @param failed               of which failed with {@link ClaimStoreException}
     * @param failedAfterFault     of which failed after the fault
     * @param unexpected           answers no correct store gives (a fresh key not acquired, a holder's
     *                             completion refused, a duplicate neither done nor acquired)
     * @param completed            keys whose completion was answered APPLIED
     * @param confirmed            of which the replicas acknowledged in time (WAIT)
     * @param windowHits           completed keys not done after the fault (lost in the replication window)
     * @param confirmedWindowHits  of which confirmed by WAIT: must be 0
     * @param duplicatesAdmitted   duplicate claims that acquired a completed key during the load
     * @param duplicatesBusy       duplicate claims that found a completed key in progress again
     * @param claimsLost           completions refused because the claim was lost in the fail-over
     * @param firstFailureMillis   fault → first failed operation, -1 if none
     * @param lastFailureMillis    fault → start of the last failed operation, -1 if none
     * @param recoveredMillis      fault → first success after the last failure
     * @param elapsedMillis        the load's duration
     */
    record Report(long attempted, long failed, long failedAfterFault, long unexpected, long completed, long confirmed,
                  long windowHits, long confirmedWindowHits, long duplicatesAdmitted, long duplicatesBusy,
                  long claimsLost, long firstFailureMillis,
                  long lastFailureMillis, long recoveredMillis, long elapsedMillis) {

        Report print(String what) {
            System.out.printf("[redis-topology] %s: attempted=%d failed=%d (after fault %d) unexpected=%d completed=%d "
                            + "confirmed=%d windowHits=%d confirmedWindowHits=%d duplicatesAdmitted=%d duplicatesBusy=%d claimsLost=%d "
                            + "firstFailure=%dms lastFailure=%dms recovered=%dms elapsed=%dms%n",
                    what, attempted, failed, failedAfterFault, unexpected, completed, confirmed, windowHits,
                    confirmedWindowHits, duplicatesAdmitted, duplicatesBusy, claimsLost, firstFailureMillis, lastFailureMillis, recoveredMillis,
                    elapsedMillis);
            return this;
        }
    }
}
