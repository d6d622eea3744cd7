package dev.onceonly.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.support.CurrentKey;
import dev.onceonly.support.Durations;
import dev.onceonly.support.LogId;

import java.util.concurrent.TimeUnit;

/**
 * State of one guarded message between claim and finalisation. It is also the transactional
 * work (ledger row, then handler) and the transaction's completion callback: one object per
 * message where lambdas would make three.
 */
final class GuardedCall<T> implements TransactionRunner.Work<T>, TransactionRunner.Completion, LeaseSweep.Lease {
    /** How long a failed completion is retried, in leases. */
    private static final int COMPLETE_RETRY_LEASES = 10;

    private final GuardEngine engine;
    final ConsumerSettings settings;
    final MessageKey key;
    final String token; // null when running unclaimed under LEDGER_ONLY
    final long start;
    private final TransactionRunner.Work<T> handler;
    volatile long guardNanos;
    volatile LedgerDecision ledgerDecision;
    /** When the lease is due for renewal ({@link LeaseSweep#now()}). */
    volatile long renewAtNanos;
    private volatile boolean leaseLost;
    /** Why the commit was refused before it happened ({@link #mayCommit}), or {@code null}. */
    volatile String commitRefused;
    /**
     * What the handler threw, for the consumer's retry rule; {@code null} when it returned. Set on
     * the handler's thread, read in {@link #completed}, which a joined caller transaction may run
     * on another.
     */
    private volatile Throwable handlerFailure;
    /**
     * The transaction committed but the store could not mark the key done: the sweep retries until
     * this deadline ({@link LeaseSweep#now()}), 0 when nothing is pending.
     */
    private volatile long completeUntilNanos;
    private volatile boolean completed;
    /**
     * Set once the engine was told this call is over. The paths that end a call (its completion, a
     * retried completion on the sweep's thread) never run at once; volatile because they may run
     * on different threads.
     */
    private volatile boolean finished;
    /** Set when {@link #duplicateInCallersTransaction} marked the key done before the transaction ended. */
    private volatile boolean markedDone;
    /** The final decision, once {@link #completed} made it; {@code null} before. */
    private volatile GuardEvent decided;

    GuardedCall(GuardEngine engine, ConsumerSettings settings, MessageKey key, String token,
                long start, TransactionRunner.Work<T> handler) {
        this.engine = engine;
        this.settings = settings;
        this.key = key;
        this.token = token;
        this.start = start;
        this.handler = handler;
    }

    /** Hands the claim to the renewal sweep until {@link #completed}. */
    void holdLease() {
        if (token == null) {
            return;
        }
        renewAtNanos = engine.leases.now() + settings.lease().toNanos() / 3;
        engine.leases.hold(this, settings.lease());
    }

    @Override
    public long renewAtNanos() {
        return renewAtNanos;
    }

    @Override
    public String consumer() {
        return settings.consumer();
    }

    @Override
    public String keyDigest() {
        return key.digest();
    }

    /** Inside the transaction: the ledger row first (when used), then the handler. */
    @Override
    public T call() throws Exception {
        if (settings.ledger()) {
            long l0 = System.nanoTime();
            GuardListener.Phase phase = engine.listener.startPhase(settings.consumer(), "ledger");
            LedgerDecision decision;
            try {
                decision = engine.ledger.insert(key.storeKey(), settings.consumer(), key.comparedHashHex());
            } finally {
                phase.end();
            }
            guardNanos += System.nanoTime() - l0;
            engine.listener.onLedgerDecision(settings.consumer(), decision);
            if (decision != LedgerDecision.INSERTED) {
                ledgerDecision = decision;
                // Leaves the transaction by exception so that it rolls back; caught in guard().
                throw new LedgerRefusal();
            }
        }
        // The handler may pass its message's key on to the services it calls (IdempotencyContext), and
        // its outbox ids derive from it: the store key, so that the application's key prefix keeps two
        // applications with a consumer of the same name apart downstream as it does in the stores.
        try (CurrentKey.Scope ignored = CurrentKey.enter(key.storeKey())) {
            return handler.call();
        } catch (Exception | Error e) {
            // Recorded as thrown, before any runner or container wraps it: the retry rule walks its causes.
            handlerFailure = e;
            throw e;
        }
    }

    /**
     * Before the commit, the holder proves it still holds the claim (or re-takes it when nobody
     * does), else the transaction rolls back: a holder whose lease lapsed during a pause or a store
     * failover must not commit while another holder runs the handler. With the ledger on there is
     * nothing to prove: its unique key already makes a second commit of the message impossible.
     * What remains is the commit's own duration (stated in README).
     */
    @Override
    public boolean mayCommit() {
        if (token == null || settings.ledger()) {
            return true;
        }
        try {
            if (engine.store.extend(key.storeKey(), token, settings.lease()) == HolderResult.APPLIED) {
                return true;
            }
            // Not held by us: if nobody holds it (the store lost it), it is ours again.
            if (engine.store.claim(key.storeKey(), token, key.fingerprint(), settings.lease()).state() == ClaimState.ACQUIRED) {
                LogId.ONCE0105I.log(settings.consumer(), key.digest(), elapsedMillis());
                return true;
            }
            refuseCommit("the claim was taken over before commit");
        } catch (ClaimStoreException e) {
            engine.listener.onStoreError(settings.consumer(), "extend");
            refuseCommit("the claim store could not confirm the claim before commit");
        }
        return false;
    }

    private void refuseCommit(String reason) {
        commitRefused = reason;
        if (!leaseLost) {
            leaseLost = true;
            engine.listener.onLeaseLost(settings.consumer());
        }
        LogId.ONCE0104W.log(settings.consumer(), key.digest(), elapsedMillis(), reason);
    }

    /** One lease renewal (or a pending completion), by the sweep. A lost lease is reported once and no longer renewed. */
    @Override
    public void renew(long now) {
        if (completeUntilNanos != 0) {
            retryComplete(now);
            return;
        }
        try {
            if (engine.store.extend(key.storeKey(), token, settings.lease()) == HolderResult.APPLIED) {
                renewAtNanos = now + settings.lease().toNanos() / 3;
                engine.listener.onLeaseRenewed(settings.consumer());
            } else if (engine.leases.drop(this)) { // not removed by completion meanwhile: really lost
                leaseLost = true;
                engine.listener.onLeaseLost(settings.consumer());
                LogId.ONCE0201W.log(settings.consumer(), key.digest(), elapsedMillis(), Durations.format(settings.lease()));
            }
        } catch (ClaimStoreException e) {
            engine.listener.onStoreError(settings.consumer(), "extend");
            LogId.ONCE0202W.log(settings.consumer(), key.digest(), e.getCause(), engine.leases.periodMillis());
        }
    }

    /**
     * The ledger found the message processed inside a caller's transaction, which is still open
     * (a JMS listener's): marks the key done now. The provider takes the message back as that
     * transaction rolls back, before its completion runs here, and may redeliver it at once: the
     * redelivery must find the key done, not in progress (a BUSY round would spend one of the
     * provider's redeliveries). A store failure leaves the mark to the completion, as before.
     */
    private void duplicateInCallersTransaction() {
        if (token == null) {
            return;
        }
        try {
            holderAnswered("complete", completeOrTakeAgain(false));
        } catch (ClaimStoreException e) {
            engine.listener.onStoreError(settings.consumer(), "complete");
            return;
        }
        engine.leases.drop(this); // done: nothing to renew until the completion
        markedDone = true;
    }

    /** Called once, after the transaction completed. */
    @Override
    public void completed(boolean committed) {
        completed = true;
        long f0 = System.nanoTime();
        GuardListener.Phase phase = engine.listener.startPhase(settings.consumer(), "finalise");
        engine.leases.drop(this);
        Outcome outcome;
        Layer layer = Layer.NONE;
        String reason = "";
        boolean retryable = true;
        LedgerDecision decision = ledgerDecision;
        MessageRefusedException passedOn = RetryRule.passedOnRefusal(handlerFailure);
        if (decision == LedgerDecision.DUPLICATE) {
            // Processed before, but the claim store forgot it (flushed, evicted, failed over):
            // remember it again so the next duplicate stops at the first layer. At once, not queued,
            // so that a redelivery finds the key done rather than BUSY; inside a caller's transaction
            // (a JMS listener) it was marked before that transaction ended, unless the store failed.
            if (markedDone) {
                finished();
            } else {
                finish("complete", true, false);
            }
            outcome = Outcome.DUPLICATE;
            layer = Layer.LEDGER;
        } else if (decision != null) {
            finish("release", false, false);
            outcome = GuardEngine.refusedOutcome(decision);
            layer = Layer.LEDGER;
            reason = GuardEngine.refusedReason(settings, decision);
            retryable = !outcome.isPermanent();
            if (decision == LedgerDecision.CONFLICT) {
                LogId.ONCE0301W.log(settings.consumer(), key.digest(), Layer.LEDGER);
            }
        } else if (committed) {
            finish("complete", true, true);
            outcome = Outcome.PROCESSED;
        } else if (commitRefused != null) {
            finish("release", false, false); // only if it is still ours
            outcome = Outcome.RETRY;
            layer = Layer.CLAIM_STORE;
            reason = commitRefused;
        } else if (passedOn != null) {
            // The handler passed on the refusal of a guarded call it made (its key BUSY, RETRY,
            // CONFLICT or REJECTED): this message is refused the same way, so that a busy nested key
            // makes it wait instead of spending its attempts. Released like any failure.
            finish("release", false, false);
            outcome = passedOn.outcome();
            retryable = !outcome.isPermanent();
            reason = "a guarded call of the handler was refused " + outcome + ": " + passedOn.reason();
            LogId.ONCE0303I.log(settings.consumer(), key.digest(), "passed on a " + outcome + " refusal of a guarded call");
        } else {
            // Released like any failure, whatever the retry rule says: whether to deliver the message
            // again is the connector's decision, made from the report below.
            finish("release", false, false);
            outcome = Outcome.FAILED;
            Throwable failure = handlerFailure;
            RetryRule.Match match = failure == null ? null : settings.retryRule().classify(failure);
            if (match != null && !match.retry()) {
                retryable = false;
                reason = match.reason();
                LogId.ONCE0304I.log(settings.consumer(), key.digest(), reason);
            } else {
                reason = "handler failed or transaction rolled back";
                LogId.ONCE0303I.log(settings.consumer(), key.digest(), "transaction rolled back");
            }
        }
        phase.end();
        guardNanos += System.nanoTime() - f0;
        decided = engine.report(settings, outcome, layer, key.digest(), reason, retryable, guardNanos);
    }

    /**
     * The ledger refused the message ({@link LedgerRefusal} left the transaction): what the call
     * throws. Inside a caller's transaction that is still open, even a DUPLICATE cannot return as
     * skipped: the failed insert spoiled that transaction (PostgreSQL aborts it) and it is marked
     * rollback-only; returning would let the caller find out only when its commit fails.
     *
     * @return the refusal; {@code null} for a DUPLICATE in a transaction that has completed
     */
    MessageRefusedException ledgerRefusal() {
        LedgerDecision decision = ledgerDecision;
        if (completed) {
            return decision == LedgerDecision.DUPLICATE ? null : new MessageRefusedException(GuardEngine.refusedOutcome(decision),
                    settings.consumer(), key.digest(), GuardEngine.refusedReason(settings, decision), null);
        }
        if (decision == LedgerDecision.DUPLICATE) {
            duplicateInCallersTransaction();
        }
        return new MessageRefusedException(decision == LedgerDecision.DUPLICATE ? Outcome.DUPLICATE : GuardEngine.refusedOutcome(decision),
                settings.consumer(), key.digest(),
                GuardEngine.refusedReason(settings, decision) + "; the caller's transaction is marked rollback-only", null);
    }

    /**
     * The call's decision once the runner returned {@code result} or {@code thrown}: final when the
     * transaction completed, else pending on the caller's transaction (see {@link Decision}).
     */
    Decision<T> decision(T result, Exception thrown) {
        GuardEvent event = decided;
        if (event != null) {
            return Decision.of(event, result, thrown);
        }
        Outcome known = thrown instanceof MessageRefusedException r ? r.outcome() : thrown != null ? Outcome.FAILED : Outcome.PROCESSED;
        Layer layer = ledgerDecision != null ? Layer.LEDGER : Layer.NONE;
        String reason = thrown instanceof MessageRefusedException r ? r.reason() : thrown != null ? "handler failed" : "";
        return Decision.pending(new GuardEvent(settings.consumer(), known, layer, key.digest(), reason, guardNanos), result, thrown);
    }

    /** @param deferrable whether a completion may be left to {@link DoneWriter} (with the ledger on) */
    private void finish(String operation, boolean complete, boolean deferrable) {
        if (token == null) {
            finished();
            return;
        }
        if (complete && deferrable && settings.ledger()) {
            // The ledger's row already stops any copy: the done marker need not hold up the
            // acknowledgement (DoneWriter says what that changes when the instance dies first).
            engine.doneWriter.add(this);
            return;
        }
        try {
            HolderResult r = complete ? completeOrTakeAgain(false) : engine.store.release(key.storeKey(), token);
            holderAnswered(operation, r);
        } catch (ClaimStoreException e) {
            engine.listener.onStoreError(settings.consumer(), operation);
            if (complete) {
                retryCompleteLater(e);
                return;
            }
            LogId.ONCE0102W.log(engine.store.name(), operation, settings.consumer(), key.digest(), e.getCause(),
                    Durations.format(settings.lease()));
        }
        finished();
    }

    private void holderAnswered(String operation, HolderResult r) {
        if (r == HolderResult.NOT_HOLDER && !leaseLost) {
            engine.listener.onLeaseLost(settings.consumer());
            LogId.ONCE0103W.log(settings.consumer(), key.digest(), operation, elapsedMillis(), Durations.format(settings.lease()));
        }
    }

    /**
     * Committed, but not marked done: without the marker a copy published later would run again (or
     * stop only at the ledger). Retried by the sweep, off the consumer's thread.
     */
    private void retryCompleteLater(ClaimStoreException e) {
        long window = settings.lease().toNanos() * COMPLETE_RETRY_LEASES;
        completeUntilNanos = engine.leases.now() + window;
        LogId.ONCE0106W.log(settings.consumer(), key.digest(), e.getCause(), engine.leases.periodMillis(),
                Durations.format(settings.lease().multipliedBy(COMPLETE_RETRY_LEASES)));
        engine.leases.hold(this, settings.lease());
    }

    /** What {@link DoneWriter} asks the store for this call. */
    ClaimStore.CompleteRequest completeRequest() {
        return new ClaimStore.CompleteRequest(key.storeKey(), token, key.fingerprint(), settings.retention());
    }

    /** {@link DoneWriter}: the store answered this call's completion. */
    void doneWritten(HolderResult r) {
        try {
            // Not ours any more: take it again if nobody holds it, as on the consumer's thread.
            holderAnswered("complete", r == HolderResult.APPLIED ? r : completeOrTakeAgain(false));
        } catch (ClaimStoreException e) {
            engine.listener.onStoreError(settings.consumer(), "complete");
            retryCompleteLater(e);
            return;
        }
        finished();
    }

    /** {@link DoneWriter}: the batch with this call's completion failed; the sweep retries it. */
    void doneNotWritten(ClaimStoreException e) {
        engine.listener.onStoreError(settings.consumer(), "complete");
        retryCompleteLater(e);
    }

    /**
     * Marks the key done. If the claim is no longer ours but nobody holds it (its lease ran out, or
     * the store lost it), it is taken again and marked: the effect committed, so it is done.
     *
     * @param retried after an attempt that failed: a key found done with this message's fingerprint
     *                is then taken as done, most likely by that attempt (its reply was lost), not as
     *                a lost lease
     */
    private HolderResult completeOrTakeAgain(boolean retried) {
        HolderResult r = engine.store.complete(key.storeKey(), token, key.fingerprint(), settings.retention());
        if (r == HolderResult.APPLIED) {
            return r;
        }
        ClaimResult again = engine.store.claim(key.storeKey(), token, key.fingerprint(), settings.lease());
        if (again.state() == ClaimState.ACQUIRED) {
            return engine.store.complete(key.storeKey(), token, key.fingerprint(), settings.retention());
        }
        return retried && again.state() == ClaimState.DONE && key.matches(again.fingerprint()) ? HolderResult.APPLIED : r;
    }

    /** The sweep's retry of a completion that failed; bounded by {@link #completeUntilNanos}. */
    private void retryComplete(long now) {
        try {
            HolderResult r = completeOrTakeAgain(true);
            engine.leases.drop(this);
            completeUntilNanos = 0;
            if (r == HolderResult.APPLIED) {
                LogId.ONCE0108I.log(settings.consumer(), key.digest(), elapsedMillis());
            } else {
                LogId.ONCE0103W.log(settings.consumer(), key.digest(), "complete", elapsedMillis(), Durations.format(settings.lease()));
            }
            finished();
        } catch (ClaimStoreException e) {
            engine.listener.onStoreError(settings.consumer(), "complete");
            if (now - completeUntilNanos >= 0) {
                engine.leases.drop(this);
                completeUntilNanos = 0;
                LogId.ONCE0107W.log(settings.consumer(), key.digest(), Durations.format(settings.lease().multipliedBy(COMPLETE_RETRY_LEASES)));
                finished();
            }
        }
    }

    /** Tells the engine this call is over, once, whichever path ends it. */
    private void finished() {
        if (!finished) {
            finished = true;
            engine.finished();
        }
    }

    private long elapsedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    /** Thrown inside the transaction to roll it back when the ledger refuses the message. */
    static final class LedgerRefusal extends RuntimeException {
        LedgerRefusal() {
            super(null, null, false, false);
        }
    }
}
