package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.internal.support.CurrentKey;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Several claimed messages of a batch in one transaction ({@link BatchGuard}): their ledger rows,
 * the handler once, the check before the commit; after it, either every message is
 * {@code PROCESSED} and finalised, or nothing is decided and {@link #ended} says how the batch
 * goes on: some messages {@linkplain Ending#SINGLE_OUT decided alone}, or the batch
 * {@linkplain Ending#SPLIT split}. Until then every claim stays held.
 */
final class BatchCall<T> implements TransactionRunner.Work<T>, TransactionRunner.Completion {

    /** How a batch's transaction ended, for what comes next. */
    enum Ending {
        /** Committed (every message {@code PROCESSED}), or left to the caller's transaction. */
        DECIDED,
        /** Rolled back because of {@link #singledOut()}: those are decided alone, the rest run again together. */
        SINGLE_OUT,
        /** The handler or the commit failed: the batch runs again in halves. */
        SPLIT
    }

    private final GuardEngine engine;
    private final ConsumerSettings settings;
    private final List<BatchGuard.Element> elements;
    private final BatchWork<T> handler;
    private final long start;
    /** Messages this transaction cannot decide: their ledger rows refused, or their claims lost before the commit. */
    private final List<BatchGuard.Element> singledOut = new CopyOnWriteArrayList<>();
    /** The handler's own time, left out of the time the guard reports. */
    private volatile long handlerNanos;
    /** Guarded by {@code this}: whether the transaction completed, and how. */
    private boolean completed;
    private boolean committed;
    /** Guarded by {@code this}: the caller returned before the transaction completed (a caller's transaction). */
    private boolean detached;
    /** The reported decisions of a commit, by the order of {@link #elements}. */
    private volatile List<GuardEvent> processed;

    BatchCall(GuardEngine engine, ConsumerSettings settings, List<BatchGuard.Element> elements, BatchWork<T> handler, long start) {
        this.engine = engine;
        this.settings = settings;
        this.elements = elements;
        this.handler = handler;
        this.start = start;
    }

    /** Inside the transaction: the ledger rows first (when used), then the handler with every message. */
    @Override
    public T call() throws Exception {
        if (settings.ledger()) {
            List<Ledger.Row> rows = new ArrayList<>(elements.size());
            for (BatchGuard.Element e : elements) {
                rows.add(new Ledger.Row(e.key.storeKey(), settings.consumer(), e.key.comparedHashHex()));
            }
            List<LedgerDecision> answers;
            GuardListener.Phase phase = engine.listener.startPhase(settings.consumer(), "ledger");
            try {
                answers = engine.calls.ledger().insertAll(rows);
            } finally {
                phase.end();
            }
            for (int i = 0; i < answers.size(); i++) {
                LedgerDecision d = answers.get(i);
                if (d != null && d != LedgerDecision.INSERTED) {
                    singledOut.add(elements.get(i)); // its decision is made alone, and told to the listener there
                }
            }
            if (!singledOut.isEmpty()) {
                throw new GuardedCall.LedgerRefusal();
            }
            for (int i = 0; i < answers.size(); i++) {
                engine.listener.onLedgerDecision(settings.consumer(), LedgerDecision.INSERTED);
            }
        }
        List<Integer> positions = new ArrayList<>(elements.size());
        for (BatchGuard.Element e : elements) {
            positions.add(e.position);
        }
        long h0 = System.nanoTime();
        // No single message's key: not even the key of a guarded handler this batch runs inside. Its
        // transaction, so that the outbox refuses a send apart from it that would have a new id each run.
        try (CurrentKey.Scope ignored = CurrentKey.enterBatch(engine.transactions.currentTransaction())) {
            return handler.call(positions);
        } finally {
            handlerNanos = System.nanoTime() - h0;
        }
    }

    /**
     * Before the commit, without the ledger, every holder proves it still holds its claim (as alone,
     * {@link HeldClaim#confirmBeforeCommit}); one that does not rolls the batch back and is decided
     * alone. With the ledger on, its unique key already stops a second commit.
     */
    @Override
    public boolean mayCommit() {
        if (settings.ledger()) {
            return true;
        }
        for (BatchGuard.Element e : elements) {
            if (e.held != null && e.held.confirmBeforeCommit() != null) {
                singledOut.add(e);
            }
        }
        return singledOut.isEmpty();
    }

    @Override
    public void completed(boolean committed) {
        boolean alone;
        synchronized (this) {
            this.completed = true;
            this.committed = committed;
            alone = detached;
        }
        if (committed) {
            processed = finish(Outcome.PROCESSED, "");
        } else if (alone) {
            // Nobody runs it again: released like any failure, and decided FAILED (the caller's transaction rolled back).
            finish(Outcome.FAILED, "handler failed or transaction rolled back");
        }
        // Else rolled back with the caller still waiting: the claims stay held for the batch's next run.
    }

    /** Finishes every claim (done when processed, else released) and reports each message. */
    private List<GuardEvent> finish(Outcome outcome, String reason) {
        long guardNanos = Math.max(0, System.nanoTime() - start - handlerNanos);
        List<GuardEvent> events = new ArrayList<>(elements.size());
        List<HeldClaim> done = new ArrayList<>(elements.size());
        for (BatchGuard.Element e : elements) {
            if (e.held == null) {
                engine.finaliser.finishUnclaimed();
            } else {
                e.held.letGo();
                if (outcome == Outcome.PROCESSED) {
                    done.add(e.held);
                } else {
                    engine.finaliser.release(e.held);
                }
            }
            events.add(engine.finaliser.report(settings, outcome, Layer.NONE, e.key.digest(), reason, true, guardNanos));
        }
        engine.finaliser.completeAll(done); // one round trip for the batch's marks
        return events;
    }

    /**
     * The runner returned {@code result} or threw {@code thrown}: the decisions of a commit go into
     * {@code decisions}; a transaction of the caller's, still open, leaves each pending on it.
     *
     * @return what comes next
     */
    Ending ended(T result, Throwable thrown, List<Decision<T>> decisions) {
        boolean pending;
        boolean wasCommitted;
        synchronized (this) {
            detached = !completed;
            pending = detached;
            wasCommitted = committed;
        }
        if (pending) {
            long nanos = Math.max(0, System.nanoTime() - start - handlerNanos);
            for (BatchGuard.Element e : elements) {
                GuardEvent known = new GuardEvent(settings.consumer(), thrown == null ? Outcome.PROCESSED : Outcome.FAILED,
                        Layer.NONE, e.key.digest(), thrown == null ? "" : "handler failed", nanos);
                decisions.set(e.position, Decision.pending(known, result, thrown));
            }
            return Ending.DECIDED;
        }
        if (wasCommitted) {
            List<GuardEvent> events = processed;
            for (int i = 0; i < elements.size(); i++) {
                decisions.set(elements.get(i).position, Decision.of(events.get(i), result, null));
            }
            return Ending.DECIDED;
        }
        return singledOut.isEmpty() ? Ending.SPLIT : Ending.SINGLE_OUT;
    }

    /** {@return the messages to decide alone, after a {@link Ending#SINGLE_OUT} ending} */
    List<BatchGuard.Element> singledOut() {
        return singledOut;
    }
}
