package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * What happens to a claim once its transaction completed: the key marked done (at once, or after the
 * acknowledgement through the {@link DoneWriter}), or released; a completion the store failed
 * retried until it lands or gives up ({@link CompletionRetries}); and the decision reported. Counts the guarded calls not
 * finished yet, which {@link #close} waits for.
 *
 * <p>Every call that {@link #started()} ends exactly once, through {@link #finishUnclaimed()},
 * {@link #complete}, {@link #release} or {@link #markedBefore}, possibly later, on another thread
 * (a deferred mark, a retried completion).
 */
final class Finaliser {

    /** While {@link #close} waits, how often it writes the done marks queued meanwhile. */
    private static final long FLUSH_WHILE_CLOSING_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final ClaimStore store;
    private final GuardListener listener;
    /** Writes done markers after the acknowledgement, for consumers with the ledger on. */
    private final DoneWriter doneWriter;
    /** Retries completions the store failed, on a sweep apart from the lease renewals. */
    private final CompletionRetries completionRetries;
    /**
     * Guarded calls between claim (or the start of a ledger-only run) and their finalisation. A
     * counter, not a set under a lock: every message passes here, on every consumer thread.
     */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Where {@link #close} waits for {@link #inFlight} to reach zero. */
    private final Object idle = new Object();
    private volatile boolean closing;

    Finaliser(ClaimStore store, GuardListener listener, DoneWriter doneWriter, ScheduledExecutorService scheduler,
              LongSupplier nanoClock) {
        this.store = store;
        this.listener = listener;
        this.doneWriter = doneWriter;
        this.completionRetries = new CompletionRetries(scheduler, nanoClock, listener, this::finished);
    }

    /** The one place a final decision is made into an event and told to the listeners. */
    GuardEvent report(ConsumerSettings s, Outcome outcome, Layer layer, String digest, String reason, boolean retryable,
                      long nanos) {
        GuardEvent event = new GuardEvent(s.consumer(), outcome, layer, digest, reason, nanos, retryable);
        try {
            listener.onOutcome(event);
        } catch (RuntimeException e) {
            // A broken listener must not change what happens to the message.
            java.util.logging.Logger.getLogger("dev.onceonly").log(java.util.logging.Level.FINE, "listener failed", e);
        }
        return event;
    }

    /** A guarded call begins: {@link #close} waits for it. */
    void started() {
        inFlight.incrementAndGet();
    }

    /** A call that ran without a claim (the ledger decided) is over. */
    void finishUnclaimed() {
        finished();
    }

    /**
     * Marks the key done: after the acknowledgement when {@code deferrable} and the consumer has the
     * ledger (whose row already stops any copy; {@link DoneWriter} says what that changes when the
     * instance dies first), else now, with a retry when the store fails.
     */
    void complete(HeldClaim claim, boolean deferrable) {
        if (deferrable && claim.settings.ledger()) {
            doneWriter.add(new DeferredMark(claim));
            return;
        }
        completeNow(claim, false);
    }

    /**
     * Marks the key done now; a store failure leaves it to the {@link CompletionRetries}.
     *
     * @param retried after a mark that failed but may have landed: the key found done with this
     *                message's fingerprint is then that mark's, not a lost lease
     */
    private void completeNow(HeldClaim claim, boolean retried) {
        try {
            claim.answered("complete", claim.completeOrTakeAgain(retried));
        } catch (ClaimStoreException e) {
            listener.onStoreError(claim.settings.consumer(), "complete");
            completionRetries.retryLater(claim, e);
            return;
        }
        finished(claim);
    }

    /**
     * Marks a committed batch's keys done: later with the ledger, else now in one round trip; a key it
     * did not mark (every key when the store failed) goes on alone: taken again, or retried later.
     */
    void completeAll(List<HeldClaim> claims) {
        if (claims.isEmpty() || claims.get(0).settings.ledger()) {
            claims.forEach(c -> complete(c, true));
            return;
        }
        List<HolderResult> results;
        try {
            results = doneWriter.completeAll(claims.stream().map(HeldClaim::completeRequest).toList());
        } catch (ClaimStoreException e) {
            listener.onStoreError(claims.get(0).settings.consumer(), "complete");
            // Any of the marks may have landed before the failure (BatchClaimStore#completeAll): each
            // goes on alone as a retried completion does, which takes its own landed mark as done.
            claims.forEach(c -> completeNow(c, true));
            return;
        }
        for (int i = 0; i < claims.size(); i++) {
            markAnswered(claims.get(i), results.get(i));
        }
    }

    /** A batched mark answered {@code r}: done, or, the claim not ours any more, taken again if nobody holds it (as alone). */
    private void markAnswered(HeldClaim claim, HolderResult r) {
        if (r == HolderResult.APPLIED) {
            finished(claim);
        } else {
            complete(claim, false);
        }
    }

    /** Releases the claim, if it is still ours; a store failure leaves it to run out with its lease. */
    void release(HeldClaim claim) {
        try {
            claim.answered("release", claim.release());
        } catch (ClaimStoreException e) {
            listener.onStoreError(claim.settings.consumer(), "release");
            LogId.ONCE0102W.log(store.name(), "release", claim.settings.consumer(), claim.key.digest(), e.getCause(),
                    Durations.format(claim.settings.lease()));
        }
        finished(claim);
    }

    /**
     * Marks the key done before its transaction ended (a ledger DUPLICATE in a caller's transaction
     * that the provider may redeliver at once): the call stays unfinished until {@link #markedBefore}.
     *
     * @return whether it was marked; {@code false} when the store failed, leaving it to {@link #complete}
     */
    boolean markNow(HeldClaim claim) {
        try {
            claim.answered("complete", claim.completeOrTakeAgain(false));
        } catch (ClaimStoreException e) {
            listener.onStoreError(claim.settings.consumer(), "complete");
            return false;
        }
        claim.letGo(); // done: nothing to renew until the completion
        return true;
    }

    /** The transaction of a call {@link #markNow marked} ended: nothing is left to write. */
    void markedBefore(HeldClaim claim) {
        finished(claim);
    }

    /**
     * Stops finalising, after waiting up to {@code timeout} for calls still unfinished and writing
     * the done marks queued meanwhile.
     *
     * @return how many calls were still unfinished when it gave up
     */
    int close(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        closing = true;
        synchronized (idle) {
            while (true) {
                // Marks queued by calls that ended meanwhile are written here, not left to a drain the
                // stopping application's executor may never run.
                doneWriter.flush();
                long left = deadline - System.nanoTime();
                if (inFlight.get() == 0 || left <= 0) {
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(idle, Math.min(left, FLUSH_WHILE_CLOSING_NANOS));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        completionRetries.stop();
        return inFlight.get();
    }

    /** {@return calls not finished yet: between claim and finalisation, or with their done mark not yet written} */
    int inFlight() {
        return inFlight.get();
    }

    /** {@return completions the store failed that are being retried now (a read for checks, no decision)} */
    int completionsRetried() {
        return completionRetries.retrying();
    }

    /** Whether {@link #close} began: new work (claims ahead) is not started. */
    boolean closing() {
        return closing;
    }

    private void finished(HeldClaim claim) {
        if (!claim.finished) {
            claim.finished = true;
            finished();
        }
    }

    private void finished() {
        if (inFlight.decrementAndGet() == 0 && closing) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
    }

    /** A completion the {@link DoneWriter} writes after the acknowledgement. */
    private final class DeferredMark implements DoneWriter.Mark {
        private final HeldClaim claim;

        DeferredMark(HeldClaim claim) {
            this.claim = claim;
        }

        @Override
        public BatchClaimStore.CompleteRequest request() {
            return claim.completeRequest();
        }

        @Override
        public void written(HolderResult r) {
            markAnswered(claim, r);
        }

        @Override
        public void notWritten(ClaimStoreException e) {
            listener.onStoreError(claim.settings.consumer(), "complete");
            completionRetries.retryLater(claim, e);
        }
    }
}
