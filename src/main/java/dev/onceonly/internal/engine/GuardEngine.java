package dev.onceonly.internal.engine;

import dev.onceonly.api.ClaimStoreControl;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.internal.support.LogId;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * The guard, in plain Java: derives the key, claims it, runs the handler inside the transaction
 * (ledger row first), and finalises the claim when the transaction completed.
 *
 * <p>{@link #guard} returns one {@link Decision} and never throws for the message; the caller (the
 * CDI interceptor, or any other adapter) translates it once:
 * <ul>
 *   <li>{@link Outcome#PROCESSED}: with what the handler returned;</li>
 *   <li>{@link Outcome#DUPLICATE}: the handler did not run;</li>
 *   <li>{@link Outcome#FAILED}: with the handler's (or the commit's) exception, claim released;
 *       {@link GuardEvent#retryable()} {@code false} when the consumer's {@link RetryRule} says the
 *       handler's exception is not worth retrying;</li>
 *   <li>{@link Outcome#BUSY}, {@link Outcome#RETRY}, {@link Outcome#CONFLICT}, {@link Outcome#REJECTED}:
 *       refused, with the {@link MessageRefusedException} a caller with no other channel throws.</li>
 * </ul>
 * Every message is reported once with its final outcome to the {@link GuardListener}; a call in a
 * caller's own transaction returns a {@linkplain Decision#pending() pending} decision, and is
 * reported when that transaction completes. The engine imports only {@code api}, {@code spi} and
 * {@code support}: it runs without CDI (docs/architecture.md).
 */
public final class GuardEngine implements ClaimStoreControl {

    /** The store itself: what a holder asks about its own claim carries nothing. */
    final ClaimStore store;
    /** The store the guard claims through: the done marks queued meanwhile ride along ({@code DoneWriter}). */
    final ClaimStore claims;
    final TransactionRunner transactions;
    private final Ledger ledger;
    final GuardListener listener;
    private final KeyDeriver keys;
    final LeaseSweep leases;
    /** Finishes claims after their transactions and reports the decisions. */
    final Finaliser finaliser;
    /** What each claim held works with. */
    final HolderContext holders;
    /** What each guarded call works with. */
    final CallContext calls;
    /** Claims the keys of the deliveries a connector hands over next, with this one's. */
    private final ClaimAhead claimAhead;
    /** Guards the messages of a batch together. */
    private final BatchGuard batches;
    /** Read by every message: new messages skip the store while set (see {@link ClaimStoreControl}). */
    final AtomicBoolean suspended = new AtomicBoolean();

    /**
     * An engine over one claim store.
     *
     * @param store        the claim store; where it is a {@link BatchClaimStore}, claim-ahead and the
     *                     done marks use its batches, else a loop over its primitives
     * @param transactions runs the ledger insert and the handler in a transaction
     * @param ledger       the ledger, or {@code null} when no consumer uses one
     * @param scheduler    runs the lease renewal sweep (from the first guarded message on, every sixth
     *                     of the shortest lease) and, with the ledger on, the batches of done markers
     *                     no claim carried (see {@code DoneWriter}); must not be used for long work
     * @param listener     told every outcome and phase
     * @param keys         derives the message keys
     */
    public GuardEngine(ClaimStore store, TransactionRunner transactions, Ledger ledger,
                       ScheduledExecutorService scheduler, GuardListener listener, KeyDeriver keys) {
        this(store, transactions, ledger, scheduler, listener, keys, System::nanoTime);
    }

    /**
     * An engine whose leases fall due on {@code nanoClock} instead of {@link System#nanoTime()}: for
     * a deterministic simulation, whose {@code scheduler} runs on the same virtual time.
     *
     * @param store        the claim store; where it is a {@link BatchClaimStore}, claim-ahead and the
     *                     done marks use its batches, else a loop over its primitives
     * @param transactions runs the ledger insert and the handler in a transaction
     * @param ledger       the ledger, or {@code null} when no consumer uses one
     * @param scheduler    as above; its delays must pass on {@code nanoClock}
     * @param listener     told every outcome and phase
     * @param keys         derives the message keys
     * @param nanoClock    the time lease renewals and completion retries are due by, in nanoseconds
     */
    public GuardEngine(ClaimStore store, TransactionRunner transactions, Ledger ledger,
                       ScheduledExecutorService scheduler, GuardListener listener, KeyDeriver keys, LongSupplier nanoClock) {
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.ledger = ledger;
        this.leases = new LeaseSweep(Objects.requireNonNull(scheduler, "scheduler"), Objects.requireNonNull(nanoClock, "nanoClock"));
        DoneWriter doneWriter = new DoneWriter(BatchClaimStore.of(store), scheduler);
        this.claims = doneWriter;
        this.listener = Objects.requireNonNull(listener, "listener");
        this.finaliser = new Finaliser(store, listener, doneWriter, scheduler, nanoClock);
        this.holders = new HolderContext(store, listener, leases);
        this.calls = new CallContext(finaliser, ledger, listener);
        this.keys = Objects.requireNonNull(keys, "keys");
        this.claimAhead = new ClaimAhead(this.keys, doneWriter, holders);
        this.batches = new BatchGuard(this, this.keys, doneWriter);
    }

    /**
     * The claim store cannot be asked, because it failed ({@code failure}) or is suspended
     * ({@code null}, logged once at {@link #suspend()}): applies the consumer's store-failure policy.
     * Returns {@code null} to go on unclaimed (the ledger decides), else the {@code RETRY} refusal.
     */
    <T> Decision<T> withoutStore(ConsumerSettings settings, MessageKey key, long start, ClaimStoreException failure) {
        boolean reject = settings.storeFailure() == StoreFailurePolicy.REJECT || !settings.ledger();
        if (failure != null) {
            LogId.ONCE0101W.log(store.name(), settings.consumer(), key.digest(), failure.getCause(),
                    reject ? StoreFailurePolicy.REJECT : StoreFailurePolicy.LEDGER_ONLY, reject ? Outcome.RETRY : "ledger decides");
        }
        return reject ? refuse(settings, Outcome.RETRY, Layer.CLAIM_STORE, key.digest(),
                failure == null ? "claim store suspended" : "claim store unavailable", start, failure) : null;
    }

    @Override
    public void suspend() {
        if (suspended.compareAndSet(false, true)) {
            LogId.ONCE0011W.log(store.name());
        }
    }

    @Override
    public void resume() {
        if (suspended.compareAndSet(true, false)) {
            LogId.ONCE0012I.log(store.name());
        }
    }

    @Override
    public boolean suspended() {
        return suspended.get();
    }

    /**
     * Stops the engine, after waiting up to {@code timeout} for guarded calls still between claim
     * and finalisation, and for done markers not yet written: their leases stay renewed and their
     * completions written meanwhile, so the
     * caller may close the claim store only after this returns (a store closed under running
     * handlers let their leases lapse and their redeliveries run again).
     *
     * @param timeout how long to wait for unfinished calls
     * @return how many calls were still unfinished when it gave up
     */
    public int close(Duration timeout) {
        int unfinished = finaliser.close(timeout);
        leases.stop();
        return unfinished;
    }

    /**
     * {@return guarded calls not finished yet: between claim and finalisation, or committed with their
     * done marker not yet written}
     */
    int inFlight() {
        return finaliser.inFlight();
    }

    /**
     * Guards one message. See the class contract for the decisions.
     *
     * @param <T>          what the handler returns
     * @param settings     the consumer's settings
     * @param dispatch     the message as delivered
     * @param parameterKey value of the {@code @IdempotencyKey} parameter, or {@code null}
     * @param handler      the guarded method
     * @return the decision, with the handler's result or what it threw; never throws for the message
     */
    public <T> Decision<T> guard(ConsumerSettings settings, Dispatch dispatch, Object parameterKey,
                                 TransactionRunner.Work<T> handler) {
        long start = System.nanoTime();
        MessageKey key;
        try {
            key = keys.derive(settings, dispatch.message(), parameterKey);
        } catch (KeyRejectedException e) {
            LogId.ONCE0302W.log(settings.consumer(), e.getMessage());
            return refuse(settings, Outcome.REJECTED, Layer.NONE, "", e.getMessage(), start, e);
        }

        // Their keys cannot include an @IdempotencyKey argument: none for those behind this one.
        if (parameterKey == null && !suspended.get() && !finaliser.closing()) {
            claimAhead.withThoseBehind(settings, dispatch);
        }
        ClaimedAhead early = claimAhead.take(settings, dispatch, key);
        String token = early != null ? early.token : Tokens.next();
        ClaimResult claim;
        if (early != null) {
            claim = early.result; // taken before, with the claims of the deliveries around it
        } else if (suspended.get()) {
            Decision<T> refused = withoutStore(settings, key, start, null);
            if (refused != null) {
                return refused;
            }
            claim = null; // unclaimed: the ledger's unique key is the only guard now
        } else {
            try {
                GuardListener.Phase phase = listener.startPhase(settings.consumer(), "claim");
                try {
                    claim = claims.claim(key.storeKey(), token, key.fingerprint(), settings.lease());
                } finally {
                    phase.end();
                }
            } catch (ClaimStoreException e) {
                listener.onStoreError(settings.consumer(), "claim");
                Decision<T> refused = withoutStore(settings, key, start, e);
                if (refused != null) {
                    return refused;
                }
                claim = null;
            }
        }

        Decision<T> refused = claim == null ? null : refusedByClaim(settings, key, claim, start);
        if (refused != null) {
            return refused;
        }
        HeldClaim held = claim == null ? null : new HeldClaim(holders, settings, key, token, claim.fence(), start);
        started(held);
        return runAlone(settings, key, held, start, handler);
    }

    /**
     * Guards the messages of a batch: one decision per dispatch, in order, each as {@link #guard}
     * would decide it for that message alone; the new ones handled together (see {@link BatchGuard}).
     *
     * @param <T>        what the handler returns
     * @param settings   the consumer's settings
     * @param dispatches the messages as delivered, in the order of the batch
     * @param handler    the guarded method, called with the positions in {@code dispatches} of the
     *                   messages it is to handle, possibly more than once (after a failure, for halves)
     * @return one decision per dispatch, in order; never throws for the messages
     */
    public <T> List<Decision<T>> guardAll(ConsumerSettings settings, List<? extends Dispatch> dispatches, BatchWork<T> handler) {
        return batches.guardAll(settings, dispatches, handler);
    }

    /** A claim store's answer to a claim: the refusal it means, or {@code null} for {@code ACQUIRED}. */
    <T> Decision<T> refusedByClaim(ConsumerSettings settings, MessageKey key, ClaimResult claim, long start) {
        return switch (claim.state()) {
            case DONE -> {
                if (!key.matches(claim.fingerprint())) {
                    LogId.ONCE0301W.log(settings.consumer(), key.digest(), Layer.CLAIM_STORE);
                    yield refuse(settings, Outcome.CONFLICT, Layer.CLAIM_STORE, key.digest(), Reasons.conflict(settings), start, null);
                }
                yield Decision.of(finaliser.report(settings, Outcome.DUPLICATE, Layer.CLAIM_STORE, key.digest(), "", true,
                        System.nanoTime() - start), null, null);
            }
            case IN_PROGRESS -> refuse(settings, Outcome.BUSY, Layer.CLAIM_STORE, key.digest(),
                    "another holder is processing this key", start, null);
            case ACQUIRED -> null;
        };
    }

    /** A call begins between its claim ({@code null}: none, the ledger decides) and its finalisation. */
    void started(HeldClaim held) {
        finaliser.started();
        if (held != null) {
            held.hold();
        }
    }

    /** One message {@link #started}, its claim held: the ledger row and the handler in a transaction of their own. */
    <T> Decision<T> runAlone(ConsumerSettings settings, MessageKey key, HeldClaim held, long start,
                             TransactionRunner.Work<T> handler) {
        GuardedCall<T> call = new GuardedCall<>(calls, settings, key, held, System.nanoTime() - start, handler);
        T result = null;
        Throwable thrown = null;
        try {
            result = transactions.run(call, call);
        } catch (Exception | Error e) {
            // An Error too (a deep payload's StackOverflowError): decided like any failure, claim released.
            thrown = e;
        }
        return call.decision(result, thrown);
    }

    /** A refusal before the handler ran: reported, and returned as the decision the call throws. */
    <T> Decision<T> refuse(ConsumerSettings s, Outcome outcome, Layer layer, String digest, String reason,
                                   long start, Throwable cause) {
        GuardEvent event = finaliser.report(s, outcome, layer, digest, reason, !outcome.isPermanent(), System.nanoTime() - start);
        return Decision.of(event, null, new MessageRefusedException(outcome, s.consumer(), digest, reason, cause));
    }
}
