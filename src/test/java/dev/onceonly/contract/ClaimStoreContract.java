package dev.onceonly.contract;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.HolderResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link ClaimStore} contract, once, for every implementation. Subclasses provide the store,
 * a way to let time pass, and a way to read a key's remaining TTL.
 *
 * @param <S> the store's type
 */
public abstract class ClaimStoreContract<S extends ClaimStore> {

    protected static final Duration LEASE = Duration.ofMillis(300);
    protected static final Duration RETENTION = Duration.ofHours(24);

    protected S store;
    protected String prefix;

    protected abstract S newStore();

    /** Lets {@code d} pass for the store (moves a clock, or sleeps). */
    protected abstract void elapse(Duration d) throws InterruptedException;

    /** Remaining time to live of the key in milliseconds, -2 when absent. */
    protected abstract long pttl(String key);

    protected abstract String newPrefix();

    /** Whether the store gives fences; one that does not must answer 0 (Redis's native claim). */
    protected boolean givesFences() {
        return true;
    }

    @BeforeEach
    void open() {
        store = newStore();
        prefix = newPrefix();
    }

    @AfterEach
    void close() {
        store.close();
    }

    /** A store that answers says so to readiness, and names itself. */
    @Test
    void aReachableStoreReportsNoProblem() {
        assertEquals(java.util.Optional.empty(), store.problem());
        assertFalse(store.name().isBlank());
    }

    @Test
    void firstClaimAcquiresThenOthersSeeInProgressThenDone() {
        String key = prefix + "k1";
        assertEquals(ClaimState.ACQUIRED, store.claim(key, "t1", "fp", LEASE).state());
        assertEquals(ClaimResult.inProgress("fp"), store.claim(key, "t2", "other", LEASE));
        assertEquals(HolderResult.APPLIED, store.complete(key, "t1", "fp", RETENTION));
        assertEquals(ClaimResult.done("fp"), store.claim(key, "t3", "fp", LEASE));
    }

    @Test
    void emptyFingerprintRoundTrips() {
        String key = prefix + "k-empty";
        store.claim(key, "t1", "", LEASE);
        assertEquals(ClaimResult.inProgress(""), store.claim(key, "t2", "", LEASE));
        store.complete(key, "t1", "", RETENTION);
        assertEquals(ClaimResult.done(""), store.claim(key, "t2", "", LEASE));
    }

    @Test
    void releaseMakesTheKeyClaimableAgain() {
        String key = prefix + "k2";
        store.claim(key, "t1", "fp", LEASE);
        assertEquals(HolderResult.APPLIED, store.release(key, "t1"));
        assertEquals(ClaimState.ACQUIRED, store.claim(key, "t2", "fp", LEASE).state());
    }

    @Test
    void onlyTheHolderCanCompleteReleaseOrExtend() {
        String key = prefix + "k3";
        store.claim(key, "t1", "fp", LEASE);
        assertEquals(HolderResult.NOT_HOLDER, store.complete(key, "intruder", "fp", RETENTION));
        assertEquals(HolderResult.NOT_HOLDER, store.release(key, "intruder"));
        assertEquals(HolderResult.NOT_HOLDER, store.extend(key, "intruder", LEASE));
        assertEquals(ClaimResult.inProgress("fp"), store.claim(key, "t2", "fp", LEASE));
    }

    @Test
    void holderWhoseLeaseExpiredCannotTouchTheNewHoldersClaim() throws InterruptedException {
        String key = prefix + "k4";
        assertEquals(ClaimState.ACQUIRED, store.claim(key, "old", "fp", LEASE).state());
        elapse(LEASE.plusMillis(150));
        assertEquals(ClaimState.ACQUIRED, store.claim(key, "new", "fp", LEASE).state(), "an expired lease frees the key");

        assertEquals(HolderResult.NOT_HOLDER, store.complete(key, "old", "fp", RETENTION));
        assertEquals(HolderResult.NOT_HOLDER, store.release(key, "old"));
        assertEquals(HolderResult.NOT_HOLDER, store.extend(key, "old", LEASE));
        assertEquals(ClaimResult.inProgress("fp"), store.claim(key, "third", "fp", LEASE), "new holder still holds it");
        assertEquals(HolderResult.APPLIED, store.complete(key, "new", "fp", RETENTION));
    }

    @Test
    void completedKeyCannotBeReleasedOrCompletedAgain() {
        String key = prefix + "k5";
        store.claim(key, "t1", "fp", LEASE);
        store.complete(key, "t1", "fp", RETENTION);
        assertEquals(HolderResult.NOT_HOLDER, store.release(key, "t1"));
        assertEquals(HolderResult.NOT_HOLDER, store.complete(key, "t1", "fp", RETENTION));
        assertEquals(HolderResult.NOT_HOLDER, store.extend(key, "t1", LEASE));
        assertEquals(ClaimState.DONE, store.claim(key, "t2", "fp", LEASE).state());
    }

    @Test
    void leaseAndRetentionAreRealTtls() {
        String key = prefix + "k6";
        store.claim(key, "t1", "fp", LEASE);
        long lease = pttl(key);
        assertInRange(lease, LEASE.toMillis() - 100, LEASE.toMillis(), "lease TTL");
        store.complete(key, "t1", "fp", RETENTION);
        long retention = pttl(key);
        assertInRange(retention, RETENTION.toMillis() - 5_000, RETENTION.toMillis(), "retention TTL");
        assertEquals(-2, pttl(prefix + "absent"));
    }

    @Test
    void extendRenewsTheLeaseSoTheHolderKeepsTheKey() throws InterruptedException {
        String key = prefix + "k7";
        store.claim(key, "t1", "fp", LEASE);
        Duration longer = Duration.ofSeconds(20);
        assertEquals(HolderResult.APPLIED, store.extend(key, "t1", longer));
        assertInRange(pttl(key), longer.toMillis() - 1_000, longer.toMillis(), "extended TTL");
        elapse(LEASE.plusMillis(150));
        assertEquals(ClaimResult.inProgress("fp"), store.claim(key, "t2", "fp", LEASE), "still held after the old lease");
    }

    @Test
    void doneKeyExpiresAfterRetention() throws InterruptedException {
        String key = prefix + "k8";
        store.claim(key, "t1", "fp", LEASE);
        store.complete(key, "t1", "fp", Duration.ofMillis(400));
        assertEquals(ClaimState.DONE, store.claim(key, "t2", "fp", LEASE).state());
        elapse(Duration.ofMillis(550));
        assertEquals(ClaimState.ACQUIRED, store.claim(key, "t3", "fp", LEASE).state());
    }

    /** A renewal racing the holder's own completion must not make the completion fail. */
    @Test
    void completionWinsAgainstTheHoldersConcurrentRenewals() throws Exception {
        ExecutorService renewer = Executors.newSingleThreadExecutor();
        try {
            for (int i = 0; i < 300; i++) {
                String key = prefix + "renewed:" + i;
                store.claim(key, "t1", "fp", Duration.ofSeconds(30));
                CountDownLatch renewing = new CountDownLatch(1);
                Future<?> renewals = renewer.submit(() -> {
                    // A different lease each time, so every renewal really changes the stored claim.
                    long ms = 30_000;
                    while (store.extend(key, "t1", Duration.ofMillis(ms++)) == HolderResult.APPLIED) {
                        renewing.countDown();
                    }
                    renewing.countDown();
                });
                renewing.await(10, TimeUnit.SECONDS);
                assertEquals(HolderResult.APPLIED, store.complete(key, "t1", "fp", RETENTION), "completion of claim " + i);
                renewals.get(10, TimeUnit.SECONDS);
                assertEquals(ClaimState.DONE, store.claim(key, "t2", "fp", LEASE).state());
            }
        } finally {
            renewer.shutdownNow();
        }
    }

    /** The fence of an acquired claim: positive where the store gives fences, else 0. */
    protected long fence(ClaimResult r) {
        assertEquals(ClaimState.ACQUIRED, r.state());
        if (givesFences()) {
            assertTrue(r.fence() > 0, "a fence is positive: " + r.fence());
        } else {
            assertEquals(0, r.fence(), "a store that gives no fences answers 0");
        }
        return r.fence();
    }

    /** Where the store gives fences, {@code later} is above {@code earlier}. */
    protected void assertFenceGrows(long earlier, long later, String after) {
        if (givesFences()) {
            assertTrue(later > earlier, "fence " + later + " after " + earlier + ": not above, after " + after);
        }
    }

    @Test
    void fencesGrowPerKeyAcrossReleaseLeaseExpiryAndAnExpiredDoneMark() throws InterruptedException {
        String key = prefix + "fenced";
        long first = fence(store.claim(key, "t1", "fp", LEASE));
        assertEquals(HolderResult.APPLIED, store.release(key, "t1"));
        long afterRelease = fence(store.claim(key, "t2", "fp", LEASE));
        assertFenceGrows(first, afterRelease, "claim, release, claim");
        elapse(LEASE.plusMillis(150));
        long afterTakeOver = fence(store.claim(key, "t3", "fp", LEASE));
        assertFenceGrows(afterRelease, afterTakeOver, "claim, lease expired, claim");
        assertEquals(HolderResult.APPLIED, store.complete(key, "t3", "fp", Duration.ofMillis(400)));
        elapse(Duration.ofMillis(550));
        long afterDone = fence(store.claim(key, "t4", "fp", LEASE));
        assertFenceGrows(afterTakeOver, afterDone, "claim, complete, done mark expired, claim");
        long last = afterDone;
        for (int i = 0; i < 50; i++) {
            assertEquals(HolderResult.APPLIED, store.release(key, i == 0 ? "t4" : "r" + (i - 1)));
            long next = fence(store.claim(key, "r" + i, "fp", LEASE));
            assertFenceGrows(last, next, "release and claim number " + i);
            last = next;
        }
    }

    /**
     * Threads race to claim one key, and each winner releases it at once: the fences, in the order
     * the holders held the key, only grow. A holder notes its fence while it holds the key, so the
     * notes are in that order.
     */
    @Test
    void racingClaimersGetFencesInTheOrderTheyHoldTheKey() throws Exception {
        String key = prefix + "fenced-race";
        int threads = 4;
        List<Long> held = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> racers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                racers.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        String token = "racer" + id + "-" + i;
                        ClaimResult r;
                        try {
                            r = store.claim(key, token, "fp", Duration.ofSeconds(30));
                        } catch (dev.onceonly.spi.ClaimStoreException e) {
                            continue; // a store may give up under contention (the database's rounds): no claim
                        }
                        if (r.state() == ClaimState.ACQUIRED) {
                            held.add(r.fence());
                            assertEquals(HolderResult.APPLIED, store.release(key, token));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> racer : racers) {
                racer.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(held.size() >= 10, "the key was claimed " + held.size() + " times");
        for (int i = 1; i < held.size(); i++) {
            assertFenceGrows(held.get(i - 1), held.get(i), "holder " + i + " of " + held.size());
        }
    }

    @Test
    void sixteenThreadsRacingOnAThousandKeysAcquireEachKeyExactlyOnce() throws Exception {
        int threads = 16;
        int keys = 1000;
        AtomicIntegerArray acquired = new AtomicIntegerArray(keys);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String token = "racer" + t;
            List<Integer> order = new ArrayList<>();
            for (int k = 0; k < keys; k++) {
                order.add(k);
            }
            Collections.shuffle(order, new java.util.Random(t));
            futures.add(pool.submit(() -> {
                start.await();
                for (int k : order) {
                    if (store.claim(prefix + "race:" + k, token, "fp", Duration.ofSeconds(30)).state() == ClaimState.ACQUIRED) {
                        acquired.incrementAndGet(k);
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        int total = 0;
        for (int k = 0; k < keys; k++) {
            assertEquals(1, acquired.get(k), "key " + k + " acquired " + acquired.get(k) + " times");
            total += acquired.get(k);
        }
        assertEquals(keys, total);
    }

    protected static void assertInRange(long value, long min, long max, String what) {
        if (value < min || value > max) {
            throw new AssertionError(what + " was " + value + " ms, expected " + min + ".." + max);
        }
    }
}
