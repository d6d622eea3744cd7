package dev.onceonly.contract;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.BatchClaimStore.ClaimRequest;
import dev.onceonly.spi.BatchClaimStore.CompleteRequest;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.HolderResult;
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

/**
 * The {@link BatchClaimStore} contract, once, for every implementation: the batches answer, per
 * request and in request order, what the primitives one after the other would, each key on its own.
 * A batch store is a claim store too, so the primitives' contract ({@link ClaimStoreContract}) runs
 * on it as well. Subclasses provide the store and the hooks of that contract.
 *
 * @param <S> the store's type
 */
public abstract class BatchClaimStoreContract<S extends BatchClaimStore> extends ClaimStoreContract<S> {

    /**
     * A batch of claims answers, per request and in request order, what single claims one after the
     * other would: fresh keys are taken with their own token, fingerprint and lease; a key in
     * progress for someone else and a done key answer with their stored fingerprint; a key twice in
     * the batch is taken by the first request and found in progress by the second.
     */
    @Test
    void claimAllAnswersEachKeyAsSingleClaimsInARowWould() {
        String other = prefix + "batch-other";
        String done = prefix + "batch-done";
        String twice = prefix + "batch-twice";
        store.claim(other, "them", "fp-other", Duration.ofSeconds(30));
        store.claim(done, "them", "fp-done", Duration.ofSeconds(30));
        store.complete(done, "them", "fp-done", RETENTION);

        List<ClaimResult> results = store.claimAll(List.of(
                new ClaimRequest(prefix + "batch-fresh1", "t1", "fp1", Duration.ofSeconds(30)),
                new ClaimRequest(other, "t2", "fp2", Duration.ofSeconds(30)),
                new ClaimRequest(twice, "t3", "fp3", Duration.ofSeconds(30)),
                new ClaimRequest(done, "t4", "fp4", Duration.ofSeconds(30)),
                new ClaimRequest(prefix + "batch-fresh2", "t5", "", Duration.ofSeconds(60)),
                new ClaimRequest(twice, "t6", "fp6", Duration.ofSeconds(30))));

        assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.inProgress("fp-other"), ClaimResult.ACQUIRED,
                ClaimResult.done("fp-done"), ClaimResult.ACQUIRED, ClaimResult.inProgress("fp3")), Fences.unfenced(results));
        // Each taken key is held by its own request's token, with its fingerprint and lease.
        assertEquals(ClaimResult.inProgress("fp1"), store.claim(prefix + "batch-fresh1", "t9", "x", LEASE));
        assertEquals(ClaimResult.inProgress(""), store.claim(prefix + "batch-fresh2", "t9", "x", LEASE));
        assertInRange(pttl(prefix + "batch-fresh1"), 29_000, 30_000, "first fresh key's lease");
        assertInRange(pttl(prefix + "batch-fresh2"), 59_000, 60_000, "second fresh key's lease");
        assertEquals(HolderResult.NOT_HOLDER, store.complete(prefix + "batch-fresh1", "t5", "fp1", RETENTION));
        assertEquals(HolderResult.APPLIED, store.complete(prefix + "batch-fresh1", "t1", "fp1", RETENTION));
        assertEquals(HolderResult.APPLIED, store.complete(prefix + "batch-fresh2", "t5", "", RETENTION));
        assertEquals(HolderResult.NOT_HOLDER, store.complete(twice, "t6", "fp6", RETENTION), "the second request did not take the key");
        assertEquals(HolderResult.APPLIED, store.complete(twice, "t3", "fp3", RETENTION));
        // What was there before is untouched.
        assertEquals(HolderResult.APPLIED, store.complete(other, "them", "fp-other", RETENTION));
        assertEquals(ClaimResult.done("fp-done"), store.claim(done, "t9", "x", LEASE));
    }

    /**
     * A batch of completions answers, per request and in request order, what single completions one
     * after the other would, and leaves the same states: a held key is done with its request's
     * fingerprint and retention; a key held by someone else, one whose lease expired (and was taken
     * again), one never claimed and a key completed twice in the batch answer NOT_HOLDER and change
     * nothing.
     */
    @Test
    void completeAllAnswersEachKeyAndLeavesTheStatesSingleCompletionsWould() throws InterruptedException {
        String expired = prefix + "batch-expired";
        String retaken = prefix + "batch-retaken";
        store.claim(expired, "t1", "fp", LEASE);
        store.claim(retaken, "t1", "fp", LEASE);
        elapse(LEASE.plusMillis(150));
        store.claim(retaken, "new", "fp-new", Duration.ofSeconds(30));
        String held1 = prefix + "batch-held1";
        String held2 = prefix + "batch-held2";
        String others = prefix + "batch-others";
        store.claim(held1, "t1", "fp1", Duration.ofSeconds(30));
        store.claim(held2, "t2", "", Duration.ofSeconds(30));
        store.claim(others, "them", "fp-them", Duration.ofSeconds(30));

        List<HolderResult> results = store.completeAll(List.of(
                new CompleteRequest(held1, "t1", "fp1", Duration.ofHours(1)),
                new CompleteRequest(others, "t1", "fp1", RETENTION),
                new CompleteRequest(expired, "t1", "fp", RETENTION),
                new CompleteRequest(held2, "t2", "", RETENTION),
                new CompleteRequest(retaken, "t1", "fp", RETENTION),
                new CompleteRequest(prefix + "batch-never", "t1", "fp", RETENTION),
                new CompleteRequest(held1, "t1", "fp1", RETENTION)));

        assertEquals(List.of(HolderResult.APPLIED, HolderResult.NOT_HOLDER, HolderResult.NOT_HOLDER, HolderResult.APPLIED,
                HolderResult.NOT_HOLDER, HolderResult.NOT_HOLDER, HolderResult.NOT_HOLDER), results);
        assertEquals(ClaimResult.done("fp1"), store.claim(held1, "t9", "x", LEASE));
        assertEquals(ClaimResult.done(""), store.claim(held2, "t9", "x", LEASE));
        assertInRange(pttl(held1), Duration.ofHours(1).toMillis() - 5_000, Duration.ofHours(1).toMillis(),
                "retention of the first request, not the repeated one's");
        assertInRange(pttl(held2), RETENTION.toMillis() - 5_000, RETENTION.toMillis(), "second held key's retention");
        assertEquals(ClaimResult.inProgress("fp-them"), store.claim(others, "t9", "x", LEASE));
        assertEquals(ClaimResult.inProgress("fp-new"), store.claim(retaken, "t9", "x", LEASE));
        assertEquals(HolderResult.APPLIED, store.complete(retaken, "new", "fp-new", RETENTION), "the new holder still holds it");
        assertEquals(-2, pttl(prefix + "batch-never"));
        assertEquals(ClaimState.ACQUIRED, store.claim(expired, "t9", "x", LEASE).state(), "the expired key stays free");
    }

    /**
     * Completions and claims in one call answer what {@link BatchClaimStore#completeAll} and then
     * {@link BatchClaimStore#claimAll} would: every completion is decided before any claim, so a key
     * completed and claimed in the same call is found done with the completion's fingerprint; a
     * completion by a token that does not hold its key changes nothing; claims take fresh keys with
     * their own token and lease.
     */
    @Test
    void completeThenClaimDecidesEveryCompletionBeforeAnyClaim() {
        String held = prefix + "both-held";
        String heldToo = prefix + "both-held-too";
        String others = prefix + "both-others";
        String fresh = prefix + "both-fresh";
        store.claim(held, "t1", "fp1", Duration.ofSeconds(30));
        store.claim(heldToo, "t2", "", Duration.ofSeconds(30));
        store.claim(others, "them", "fp-them", Duration.ofSeconds(30));

        BatchClaimStore.Answers answers = store.completeThenClaim(
                List.of(new CompleteRequest(held, "t1", "fp1", Duration.ofHours(1)),
                        new CompleteRequest(others, "t1", "fp1", RETENTION),
                        new CompleteRequest(heldToo, "t2", "", RETENTION)),
                List.of(new ClaimRequest(fresh, "t3", "fp3", Duration.ofSeconds(30)),
                        new ClaimRequest(held, "t4", "fp1", Duration.ofSeconds(30)),
                        new ClaimRequest(others, "t4", "fp4", Duration.ofSeconds(30))));

        assertEquals(List.of(HolderResult.APPLIED, HolderResult.NOT_HOLDER, HolderResult.APPLIED), answers.completions());
        assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.done("fp1"), ClaimResult.inProgress("fp-them")), Fences.unfenced(answers.claims()));
        assertInRange(pttl(held), Duration.ofHours(1).toMillis() - 5_000, Duration.ofHours(1).toMillis(), "the completion's retention");
        assertInRange(pttl(fresh), 29_000, 30_000, "the claim's lease");
        assertEquals(ClaimResult.done(""), store.claim(heldToo, "t9", "x", LEASE));
        assertEquals(HolderResult.APPLIED, store.complete(fresh, "t3", "fp3", RETENTION), "the claim's token holds the fresh key");
        assertEquals(HolderResult.APPLIED, store.complete(others, "them", "fp-them", RETENTION), "someone else's key is untouched");

        BatchClaimStore.Answers none = store.completeThenClaim(List.of(), List.of());
        assertEquals(List.of(), none.completions());
        assertEquals(List.of(), none.claims());
    }

    /**
     * A batch's claims carry fences as single claims do: each above the fence of the key's earlier
     * claim, in {@code claimAll} and in {@code completeThenClaim}.
     */
    @Test
    void batchClaimsCarryFencesAboveEachKeysEarlierClaim() {
        List<String> keys = List.of(prefix + "bf1", prefix + "bf2", prefix + "bf3");
        long[] earlier = new long[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            earlier[i] = fence(store.claim(keys.get(i), "a" + i, "fp", Duration.ofSeconds(30)));
            assertEquals(HolderResult.APPLIED, store.release(keys.get(i), "a" + i));
        }
        List<ClaimRequest> second = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            second.add(new ClaimRequest(keys.get(i), "b" + i, "fp", Duration.ofSeconds(30)));
        }
        List<ClaimResult> claimed = store.claimAll(second);
        for (int i = 0; i < keys.size(); i++) {
            long f = fence(claimed.get(i));
            assertFenceGrows(earlier[i], f, "claimAll of key " + i);
            earlier[i] = f;
        }
        String marked = prefix + "bf-marked";
        store.claim(marked, "m", "fp", Duration.ofSeconds(30));
        List<ClaimRequest> third = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            assertEquals(HolderResult.APPLIED, store.release(keys.get(i), "b" + i));
            third.add(new ClaimRequest(keys.get(i), "c" + i, "fp", Duration.ofSeconds(30)));
        }
        BatchClaimStore.Answers answers = store.completeThenClaim(
                List.of(new CompleteRequest(marked, "m", "fp", RETENTION)), third);
        assertEquals(List.of(HolderResult.APPLIED), answers.completions());
        for (int i = 0; i < keys.size(); i++) {
            assertFenceGrows(earlier[i], fence(answers.claims().get(i)), "completeThenClaim of key " + i);
        }
    }

    /** An empty batch answers an empty list. */
    @Test
    void emptyBatchesAnswerEmptyLists() {
        assertEquals(List.of(), store.claimAll(List.of()));
        assertEquals(List.of(), store.completeAll(List.of()));
    }

    /**
     * A long batch (longer than a store may send at once) keeps request order: fresh keys and keys
     * in progress for others alternate, each of the latter with a fingerprint of its own.
     */
    @Test
    void aLongBatchAnswersInRequestOrder() {
        int n = 300;
        List<ClaimRequest> claims = new ArrayList<>();
        List<ClaimResult> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String key = prefix + "long:" + i;
            if (i % 2 == 1) {
                store.claim(key, "them", "fp" + i, Duration.ofSeconds(30));
                expected.add(ClaimResult.inProgress("fp" + i));
            } else {
                expected.add(ClaimResult.ACQUIRED);
            }
            claims.add(new ClaimRequest(key, "t" + i, "mine" + i, Duration.ofSeconds(30)));
        }
        assertEquals(expected, Fences.unfenced(store.claimAll(claims)));

        List<CompleteRequest> completions = new ArrayList<>();
        List<HolderResult> applied = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            completions.add(new CompleteRequest(prefix + "long:" + i, "t" + i, "mine" + i, RETENTION));
            applied.add(i % 2 == 0 ? HolderResult.APPLIED : HolderResult.NOT_HOLDER);
        }
        assertEquals(applied, store.completeAll(completions));
        for (int i = 0; i < n; i += 37) {
            assertEquals(i % 2 == 0 ? ClaimResult.done("mine" + i) : ClaimResult.inProgress("fp" + i),
                    store.claim(prefix + "long:" + i, "t9", "x", LEASE), "key " + i);
        }
    }

    /** Batches racing on the same keys: each key is still acquired exactly once. */
    @Test
    void eightThreadsClaimingInBatchesAcquireEachKeyExactlyOnce() throws Exception {
        int threads = 8;
        int keys = 400;
        int batch = 16;
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
                for (int from = 0; from < keys; from += batch) {
                    List<Integer> part = order.subList(from, Math.min(keys, from + batch));
                    List<ClaimResult> results = store.claimAll(part.stream()
                            .map(k -> new ClaimRequest(prefix + "batch-race:" + k, token, "fp", Duration.ofSeconds(30))).toList());
                    for (int i = 0; i < part.size(); i++) {
                        if (results.get(i).state() == ClaimState.ACQUIRED) {
                            acquired.incrementAndGet(part.get(i));
                        }
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
        for (int k = 0; k < keys; k++) {
            assertEquals(1, acquired.get(k), "key " + k + " acquired " + acquired.get(k) + " times");
        }
    }
}
