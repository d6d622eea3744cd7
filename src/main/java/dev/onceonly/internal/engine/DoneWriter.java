package dev.onceonly.internal.engine;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Marks keys done after their messages were settled, for consumers with the ledger on: a message is
 * acknowledged without waiting for its own completion's reply. A decorator of the claim store: its
 * {@link #claim} and {@link #claimAll} send the completions queued here ahead of the claims, in
 * their round trip, where the store {@link BatchClaimStore#completesWithClaims}; every other call
 * goes straight to the store. The completions no claim came for go together in the drain's next
 * batch ({@link BatchClaimStore#completeAll}: one round trip on Redis), so under load the store
 * sees a fraction of the round trips.
 *
 * <p>Why only with the ledger: until the done marker is written the key is in progress, and if the
 * instance dies first it stays so until its lease ends; a copy that comes meanwhile is answered BUSY,
 * and one that comes after the lease is claimed again and stopped by the ledger's unique key (its
 * row committed with the effect). Without a ledger nothing would stop that copy, so those consumers
 * complete before the acknowledgement, on the consumer's thread.
 *
 * <p>The drain on the executor writes the marks no claim took. One drain at a time runs there,
 * {@link #GATHER_MICROS} after the first completion it will carry; a call added while it waits or
 * runs is taken by it, by a claim or by the drain the adder starts. Each queued completion is taken
 * by one writer only. A store failure hands each mark of the batch back to its own retry (as for a
 * completion that failed on the consumer's thread).
 */
final class DoneWriter implements BatchClaimStore {

    /** One done mark to write, told the store's answer exactly once. */
    interface Mark {
        /** {@return the completion to send} */
        CompleteRequest request();

        /** The store answered this mark. */
        void written(HolderResult result);

        /** The batch with this mark failed. */
        void notWritten(ClaimStoreException failure);
    }

    /** Most completions in one round trip: bounds the request and the time one batch holds the drain. */
    static final int MAX_BATCH = 128;
    /**
     * Most completions one claim carries: each adds a script to the claim's round trip, which the
     * consumer's thread waits for. A backlog beyond is the drain's.
     */
    static final int MAX_CARRIED = 16;
    /**
     * How long the first completion of a batch waits for others. Waking the executor's thread costs
     * the consumer's thread more than the enqueue itself (a managed executor also captures the
     * thread's context per task), so at a few hundred messages a second a drain started at once would
     * carry one mark per wake-up; a few milliseconds gather several. Only copies arriving within
     * these milliseconds of the original see its claim in progress (BUSY, retried) instead of done.
     */
    static final long GATHER_MICROS = 5_000;

    private final BatchClaimStore store;
    /** Whether claims carry queued completions: only where that adds no wait to the claim. */
    private final boolean withClaims;
    private final ScheduledExecutorService executor;
    private final ConcurrentLinkedQueue<Mark> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();

    /**
     * @param store    the store decorated; its batches write the marks
     * @param executor runs the drain
     */
    DoneWriter(BatchClaimStore store, ScheduledExecutorService executor) {
        this.store = store;
        this.withClaims = store.completesWithClaims();
        this.executor = executor;
    }

    /**
     * The store's claim, with the completions queued here sent ahead of it where the store allows.
     * Most claims carry nothing and go straight to the store, allocating nothing here.
     *
     * @throws ClaimStoreException when the store failed; the completions it carried are then retried
     *                             by the sweep
     */
    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        if (!withClaims || pending.isEmpty()) {
            return store.claim(key, token, fingerprint, lease);
        }
        return carryingMarks(List.of(new ClaimRequest(key, token, fingerprint, lease))).get(0);
    }

    /**
     * The store's claims, with the completions queued here sent ahead where the store allows.
     *
     * @throws ClaimStoreException as {@link #claim}
     */
    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> claims) {
        if (!withClaims || pending.isEmpty()) {
            return store.claimAll(claims);
        }
        return carryingMarks(claims);
    }

    private List<ClaimResult> carryingMarks(List<ClaimRequest> claims) {
        List<Mark> batch = nextBatch(MAX_CARRIED);
        if (batch.isEmpty()) {
            return store.claimAll(claims); // taken meanwhile by the drain or another claim
        }
        Answers answers;
        try {
            answers = store.completeThenClaim(requests(batch), claims);
        } catch (ClaimStoreException e) {
            notWritten(batch, e);
            throw e;
        } catch (RuntimeException e) {
            notWritten(batch, new ClaimStoreException(store.name(), "complete", e));
            throw e;
        }
        written(batch, answers.completions());
        return answers.claims();
    }

    /** Queues the completion {@code call}; it is told the answer ({@link Mark#written}, {@link Mark#notWritten}). */
    void add(Mark call) {
        pending.add(call);
        if (draining.compareAndSet(false, true)) {
            try {
                executor.schedule(this::drain, GATHER_MICROS, TimeUnit.MICROSECONDS);
            } catch (RejectedExecutionException e) {
                // The executor is stopping (application shutdown): write on this thread rather than
                // leave a committed message in progress until its lease ends.
                drain();
            }
        }
    }

    /**
     * Writes what is queued on the calling thread, now. For shutdown: the executor of a stopping
     * application may no longer run the drain it was given. Safe beside a running drain: each
     * completion is taken from the queue by one of them only.
     */
    void flush() {
        for (List<Mark> batch = nextBatch(MAX_BATCH); !batch.isEmpty(); batch = nextBatch(MAX_BATCH)) {
            write(batch);
        }
    }

    private void drain() {
        do {
            try {
                flush();
            } finally {
                // Cleared even if a batch threw: a drain that never ends would hold every later marker.
                draining.set(false);
            }
            // A call added after the last poll but before the flag was cleared found the drain still
            // running and started none: take it now.
        } while (!pending.isEmpty() && draining.compareAndSet(false, true));
    }

    private List<Mark> nextBatch(int max) {
        List<Mark> batch = new ArrayList<>();
        Mark call;
        while (batch.size() < max && (call = pending.poll()) != null) {
            batch.add(call);
        }
        return batch;
    }

    private void write(List<Mark> batch) {
        List<HolderResult> results;
        try {
            results = store.completeAll(requests(batch));
        } catch (ClaimStoreException e) {
            notWritten(batch, e);
            return;
        } catch (RuntimeException e) {
            // Not a store failure the contract allows; still, no call may be left unfinished.
            notWritten(batch, new ClaimStoreException(store.name(), "complete", e));
            return;
        }
        written(batch, results);
    }

    private static List<CompleteRequest> requests(List<Mark> batch) {
        List<CompleteRequest> requests = new ArrayList<>(batch.size());
        for (Mark call : batch) {
            requests.add(call.request());
        }
        return requests;
    }

    private static void written(List<Mark> batch, List<HolderResult> results) {
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).written(results.get(i));
        }
    }

    private static void notWritten(List<Mark> batch, ClaimStoreException failure) {
        for (Mark call : batch) {
            call.notWritten(failure);
        }
    }

    // Straight to the store: they carry nothing (a holder's own calls, and batches of the caller's).

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return store.complete(key, token, fingerprint, retention);
    }

    @Override
    public HolderResult release(String key, String token) {
        return store.release(key, token);
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return store.extend(key, token, lease);
    }

    @Override
    public List<HolderResult> completeAll(List<CompleteRequest> requests) {
        return store.completeAll(requests);
    }

    @Override
    public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        return store.completeThenClaim(completions, claims);
    }

    @Override
    public boolean completesWithClaims() {
        return withClaims;
    }

    @Override
    public String name() {
        return store.name();
    }

    @Override
    public Optional<String> problem() {
        return store.problem();
    }

    /** Closes the store; the marks still queued are the {@link #flush} of whoever stops the engine. */
    @Override
    public void close() {
        store.close();
    }
}
