package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.internal.support.CurrentKey;
import dev.onceonly.internal.support.LogId;

/**
 * One guarded message between its claim and its decision: the transactional work (ledger row, then
 * handler), the check before the commit, and, once the transaction completed, the outcome — handed
 * to the {@link Finaliser} to finish the claim and report. One object per message where lambdas
 * would make three.
 */
final class GuardedCall<T> implements TransactionRunner.Work<T>, TransactionRunner.Completion {

    private final CallContext context;
    private final ConsumerSettings settings;
    private final MessageKey key;
    /** {@code null} when running unclaimed under LEDGER_ONLY. */
    private final HeldClaim claim;
    private final TransactionRunner.Work<T> handler;
    /** Time the guard spent on this message, handler excluded. */
    private volatile long guardNanos;
    /** What the ledger said when it refused the message; {@code null} when it inserted (or is off). */
    private volatile LedgerDecision ledgerRefused;
    /** Why the commit was refused before it happened ({@link #mayCommit}), or {@code null}. */
    private volatile String commitRefused;
    /**
     * What the handler threw, for the consumer's retry rule; {@code null} when it returned. Set on
     * the handler's thread, read in {@link #completed}, which a joined caller transaction may run
     * on another.
     */
    private volatile Throwable handlerFailure;
    private volatile boolean completed;
    /** Set when the key was marked done before the caller's transaction ended ({@link #ledgerRefusal}). */
    private volatile boolean markedDone;
    /** The final decision, once {@link #completed} made it; {@code null} before. */
    private volatile GuardEvent decided;

    GuardedCall(CallContext context, ConsumerSettings settings, MessageKey key, HeldClaim claim, long guardNanos,
                TransactionRunner.Work<T> handler) {
        this.context = context;
        this.settings = settings;
        this.key = key;
        this.claim = claim;
        this.guardNanos = guardNanos;
        this.handler = handler;
    }

    /** Inside the transaction: the ledger row first (when used), then the handler. */
    @Override
    public T call() throws Exception {
        if (settings.ledger()) {
            long l0 = System.nanoTime();
            GuardListener.Phase phase = context.listener().startPhase(settings.consumer(), "ledger");
            LedgerDecision decision;
            try {
                decision = context.ledger().insert(key.storeKey(), settings.consumer(), key.comparedHashHex());
            } finally {
                phase.end();
            }
            guardNanos += System.nanoTime() - l0;
            context.listener().onLedgerDecision(settings.consumer(), decision);
            if (decision != LedgerDecision.INSERTED) {
                ledgerRefused = decision;
                // Leaves the transaction by exception so that it rolls back; its meaning stays here.
                throw new LedgerRefusal();
            }
        }
        // The handler may pass its message's key on to the services it calls (IdempotencyContext), and
        // its outbox ids derive from it: the store key, so that the application's key prefix keeps two
        // applications with a consumer of the same name apart downstream as it does in the stores.
        // With it goes the claim's fence, which orders this holder against any that took the key over.
        try (CurrentKey.Scope ignored = CurrentKey.enter(key.storeKey(), claim == null ? 0 : claim.fence)) {
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
     * What remains is the commit's own duration (stated in docs/guarantees.md).
     */
    @Override
    public boolean mayCommit() {
        if (claim == null || settings.ledger()) {
            return true;
        }
        commitRefused = claim.confirmBeforeCommit();
        return commitRefused == null;
    }

    /** Called once, after the transaction completed: finishes the claim and makes the decision. */
    @Override
    public void completed(boolean committed) {
        completed = true;
        long f0 = System.nanoTime();
        GuardListener.Phase phase = context.listener().startPhase(settings.consumer(), "finalise");
        if (claim != null) {
            claim.letGo();
        }
        Outcome outcome;
        Layer layer = Layer.NONE;
        String reason = "";
        boolean retryable = true;
        LedgerDecision decision = ledgerRefused;
        MessageRefusedException passedOn = RetryRule.passedOnRefusal(handlerFailure);
        if (decision == LedgerDecision.DUPLICATE) {
            // Processed before, but the claim store forgot it (flushed, evicted, failed over):
            // remember it again so the next duplicate stops at the first layer. At once, not queued,
            // so that a redelivery finds the key done rather than BUSY; inside a caller's transaction
            // (a JMS listener) it was marked before that transaction ended, unless the store failed.
            finish(markedDone ? Finish.MARKED_BEFORE : Finish.COMPLETE_NOW);
            outcome = Outcome.DUPLICATE;
            layer = Layer.LEDGER;
        } else if (decision != null) {
            finish(Finish.RELEASE);
            outcome = Reasons.ledgerOutcome(decision);
            layer = Layer.LEDGER;
            reason = Reasons.ledgerReason(settings, decision);
            retryable = !outcome.isPermanent();
            if (decision == LedgerDecision.CONFLICT) {
                LogId.ONCE0301W.log(settings.consumer(), key.digest(), Layer.LEDGER);
            }
        } else if (committed) {
            finish(Finish.COMPLETE_DEFERRABLE);
            outcome = Outcome.PROCESSED;
        } else if (commitRefused != null) {
            finish(Finish.RELEASE); // only if it is still ours
            outcome = Outcome.RETRY;
            layer = Layer.CLAIM_STORE;
            reason = commitRefused;
        } else if (passedOn != null) {
            // The handler passed on the refusal of a guarded call it made (its key BUSY, RETRY,
            // CONFLICT or REJECTED): this message is refused the same way, so that a busy nested key
            // makes it wait instead of spending its attempts. Released like any failure.
            finish(Finish.RELEASE);
            outcome = passedOn.outcome();
            retryable = !outcome.isPermanent();
            reason = "a guarded call of the handler was refused " + outcome + ": " + passedOn.reason();
            LogId.ONCE0303I.log(settings.consumer(), key.digest(), "passed on a " + outcome + " refusal of a guarded call");
        } else {
            // Released like any failure, whatever the retry rule says: whether to deliver the message
            // again is the connector's decision, made from the report below.
            finish(Finish.RELEASE);
            outcome = Outcome.FAILED;
            Throwable failure = handlerFailure;
            RetryRule.Match match = failure == null ? null : settings.retryRule().classify(failure);
            // Logged by whoever acts on the decision (the connector, a JMS listener's adapter, the
            // interceptor for a plain call): one line per failed attempt, with what it leads to.
            if (match != null && !match.retry()) {
                retryable = false;
                reason = match.reason();
            } else {
                reason = "handler failed or transaction rolled back";
            }
        }
        phase.end();
        guardNanos += System.nanoTime() - f0;
        decided = context.finaliser().report(settings, outcome, layer, key.digest(), reason, retryable, guardNanos);
    }

    /** How a completed call's claim ends. */
    private enum Finish { COMPLETE_NOW, COMPLETE_DEFERRABLE, MARKED_BEFORE, RELEASE }

    private void finish(Finish how) {
        if (claim == null) {
            context.finaliser().finishUnclaimed();
            return;
        }
        switch (how) {
            case COMPLETE_NOW -> context.finaliser().complete(claim, false);
            case COMPLETE_DEFERRABLE -> context.finaliser().complete(claim, true);
            case MARKED_BEFORE -> context.finaliser().markedBefore(claim);
            case RELEASE -> context.finaliser().release(claim);
        }
    }

    /**
     * The call's decision once the runner returned {@code result} or threw {@code thrown}: final when
     * the transaction completed, else pending on the caller's transaction (see {@link Decision}).
     */
    Decision<T> decision(T result, Throwable thrown) {
        Throwable raised = thrown instanceof LedgerRefusal ? ledgerRefusal()
                // Rolled back because the claim was no longer ours: the message comes again, not an attempt.
                : thrown != null && commitRefused != null
                ? new MessageRefusedException(Outcome.RETRY, settings.consumer(), key.digest(), commitRefused, thrown)
                : thrown;
        GuardEvent event = decided;
        if (event != null) {
            return Decision.of(event, result, raised);
        }
        Outcome known = raised instanceof MessageRefusedException r ? r.outcome() : raised != null ? Outcome.FAILED : Outcome.PROCESSED;
        Layer layer = ledgerRefused != null ? Layer.LEDGER : Layer.NONE;
        String reason = raised instanceof MessageRefusedException r ? r.reason() : raised != null ? "handler failed" : "";
        return Decision.pending(new GuardEvent(settings.consumer(), known, layer, key.digest(), reason, guardNanos), result, raised);
    }

    /**
     * The ledger refused the message: what the call throws. Inside a caller's transaction that is
     * still open, even a DUPLICATE cannot return as skipped: the failed insert spoiled that
     * transaction (PostgreSQL aborts it) and it is marked rollback-only; returning would let the
     * caller find out only when its commit fails. Such a DUPLICATE's key is marked done now: the
     * provider takes the message back as that transaction rolls back, before its completion runs
     * here, and may redeliver it at once, which must find the key done, not in progress (a BUSY round
     * would spend one of the provider's redeliveries). A store failure leaves the mark to the completion.
     *
     * @return the refusal; {@code null} for a DUPLICATE in a transaction that has completed
     */
    private MessageRefusedException ledgerRefusal() {
        LedgerDecision decision = ledgerRefused;
        if (completed) {
            return decision == LedgerDecision.DUPLICATE ? null : new MessageRefusedException(Reasons.ledgerOutcome(decision),
                    settings.consumer(), key.digest(), Reasons.ledgerReason(settings, decision), null);
        }
        if (decision == LedgerDecision.DUPLICATE && claim != null) {
            markedDone = context.finaliser().markNow(claim);
        }
        return new MessageRefusedException(decision == LedgerDecision.DUPLICATE ? Outcome.DUPLICATE : Reasons.ledgerOutcome(decision),
                settings.consumer(), key.digest(),
                Reasons.ledgerReason(settings, decision) + "; the caller's transaction is marked rollback-only", null);
    }

    /** Thrown inside the transaction to roll it back when the ledger refuses the message. */
    static final class LedgerRefusal extends RuntimeException {
        LedgerRefusal() {
            super(null, null, false, false);
        }
    }
}
