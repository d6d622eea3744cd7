package dev.onceonly.engine;

import dev.onceonly.api.ClaimStoreControl;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.spi.AheadClaim;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.support.LogId;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
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

    private static final int TOKEN_CHARS = 21;
    /** While {@link #close} waits, how often it writes the done marks queued meanwhile. */
    private static final long FLUSH_WHILE_CLOSING_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final byte[] TOKEN_ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);

    final ClaimStore store;
    private final TransactionRunner transactions;
    final Ledger ledger;
    final GuardListener listener;
    private final KeyDeriver keys;
    final LeaseSweep leases;
    /** Writes done markers after the acknowledgement, for consumers with the ledger on. */
    final DoneWriter doneWriter;
    /**
     * Guarded calls between claim (or the start of a ledger-only run) and their finalisation. A
     * counter, not a set under a lock: every message passes here, on every consumer thread.
     */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Where {@link #close} waits for {@link #inFlight} to reach zero. */
    private final Object idle = new Object();
    private volatile boolean closing;
    /** Read by every message: new messages skip the store while set (see {@link ClaimStoreControl}). */
    private final AtomicBoolean suspended = new AtomicBoolean();

    /**
     * An engine over one claim store.
     *
     * @param store        the claim store
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
     * @param store        the claim store
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
        this.doneWriter = new DoneWriter(store, scheduler);
        this.listener = Objects.requireNonNull(listener, "listener");
        this.keys = Objects.requireNonNull(keys, "keys");
    }

    /**
     * The claim store cannot be asked, because it failed ({@code failure}) or is suspended
     * ({@code null}, logged once at {@link #suspend()}): applies the consumer's store-failure policy.
     * Returns {@code null} to go on unclaimed (the ledger decides), else the {@code RETRY} refusal.
     */
    private <T> Decision<T> withoutStore(ConsumerSettings settings, MessageKey key, long start, ClaimStoreException failure) {
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
        long deadline = System.nanoTime() + timeout.toNanos();
        closing = true;
        synchronized (idle) {
            while (true) {
                // Marks queued by calls that ended meanwhile are written here, not left to a drain the
                // stopping application's executor may never run.
                doneWriter.flush();
                long left = deadline - System.nanoTime();
                if (inFlight() == 0 || left <= 0) {
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
        leases.stop();
        return inFlight();
    }

    /**
     * {@return guarded calls not finished yet: between claim and finalisation, or committed with their
     * done marker not yet written}
     */
    int inFlight() {
        return inFlight.get();
    }

    void started() {
        inFlight.incrementAndGet();
    }

    /** Called exactly once per {@link #started()} ({@link GuardedCall} makes sure). */
    void finished() {
        if (inFlight.decrementAndGet() == 0 && closing) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
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

        if (dispatch.aheadClaim() == null && parameterKey == null && !suspended.get()) {
            // Deliveries the connector will hand over next: their claims go in the same round trip
            // as this one's. (Their keys cannot include an @IdempotencyKey argument, hence the check.)
            List<? extends Dispatch> behind = dispatch.claimAheadWith();
            if (!behind.isEmpty()) {
                List<Dispatch> batch = new ArrayList<>(behind.size() + 1);
                batch.add(dispatch);
                batch.addAll(behind);
                claimAhead(settings, batch);
            }
        }
        AheadClaim ahead = dispatch.aheadClaim();
        EarlyClaim early = ahead instanceof EarlyClaim e && e.take(settings, key) ? e : null;
        String token = early != null ? early.token : newToken();
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
                    // The done marks queued meanwhile go in the same round trip (DoneWriter).
                    claim = doneWriter.claim(key.storeKey(), token, key.fingerprint(), settings.lease());
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

        if (claim != null) {
            switch (claim.state()) {
                case DONE -> {
                    if (!key.matches(claim.fingerprint())) {
                        LogId.ONCE0301W.log(settings.consumer(), key.digest(), Layer.CLAIM_STORE);
                        return refuse(settings, Outcome.CONFLICT, Layer.CLAIM_STORE, key.digest(), conflictReason(settings), start, null);
                    }
                    return Decision.of(report(settings, Outcome.DUPLICATE, Layer.CLAIM_STORE, key.digest(), "", true,
                            System.nanoTime() - start), null, null);
                }
                case IN_PROGRESS -> {
                    return refuse(settings, Outcome.BUSY, Layer.CLAIM_STORE, key.digest(),
                            "another holder is processing this key", start, null);
                }
                case ACQUIRED -> { }
            }
        }

        GuardedCall<T> call = new GuardedCall<>(this, settings, key, claim == null ? null : token, start, handler);
        started();
        call.holdLease();
        call.guardNanos += System.nanoTime() - start;
        T result = null;
        Exception thrown;
        try {
            result = transactions.run(call, call);
            thrown = null;
        } catch (GuardedCall.LedgerRefusal refusal) {
            thrown = call.ledgerRefusal();
        } catch (Exception e) {
            // Rolled back because the claim was no longer ours: the message comes again, not an attempt.
            thrown = call.commitRefused == null ? e
                    : new MessageRefusedException(Outcome.RETRY, settings.consumer(), key.digest(), call.commitRefused, e);
        }
        return call.decision(result, thrown);
    }

    /**
     * Claims the keys of a delivery and of those the connector will hand over after it
     * ({@link Dispatch#claimAheadWith}) in one call to the store ({@link ClaimStore#claimAll}: one
     * round trip on Redis), and gives each dispatch its claim ({@link Dispatch#holdAheadClaim}):
     * each is then guarded without a round trip of its own. Only acquired and done answers are kept:
     * an in-progress one may be over by the message's turn. Fencing and leases are those of any
     * claim: the token is the message's, the lease is renewed while the delivery waits, and a claim
     * the guard does not take (the delivery was settled otherwise) is released by
     * {@link AheadClaim#abandon}.
     *
     * <p>Skips dispatches that hold a claim, keys that cannot be derived (refused in their turn, with
     * the reason), and everything when the store fails (any of those keys that it took anyway is
     * released here, or runs out with its lease): each message is then claimed in its turn.
     */
    private void claimAhead(ConsumerSettings settings, List<? extends Dispatch> dispatches) {
        if (closing) {
            return;
        }
        List<Dispatch> targets = new ArrayList<>(dispatches.size());
        List<MessageKey> messageKeys = new ArrayList<>(dispatches.size());
        List<ClaimStore.ClaimRequest> requests = new ArrayList<>(dispatches.size());
        for (Dispatch d : dispatches) {
            if (d.aheadClaim() != null) {
                continue;
            }
            MessageKey key;
            try {
                key = keys.derive(settings, d.message(), null);
            } catch (KeyRejectedException e) {
                continue;
            }
            targets.add(d);
            messageKeys.add(key);
            requests.add(new ClaimStore.ClaimRequest(key.storeKey(), newToken(), key.fingerprint(), settings.lease()));
        }
        if (requests.isEmpty()) {
            return;
        }
        List<ClaimResult> results;
        GuardListener.Phase phase = listener.startPhase(settings.consumer(), "claim-ahead");
        long sentAt = leases.now(); // the leases the store grants run from later than this
        try {
            results = doneWriter.claimAll(requests);
        } catch (ClaimStoreException e) {
            listener.onStoreError(settings.consumer(), "claim");
            releaseQuietly(requests);
            return;
        } finally {
            phase.end();
        }
        for (int i = 0; i < targets.size(); i++) {
            ClaimResult result = results.get(i);
            if (result.state() == ClaimState.IN_PROGRESS) {
                continue;
            }
            EarlyClaim claim = new EarlyClaim(this, settings, messageKeys.get(i), requests.get(i).token(), result, sentAt);
            Dispatch d = targets.get(i);
            d.holdAheadClaim(claim);
            if (d.aheadClaim() != claim) {
                claim.abandon(); // a dispatch that keeps no claim would leave it held until its lease ends
            }
        }
    }

    /** After a failed {@link ClaimStore#claimAll}: a key it took anyway is ours, and nobody would use it. */
    private void releaseQuietly(List<ClaimStore.ClaimRequest> requests) {
        try {
            for (ClaimStore.ClaimRequest r : requests) {
                store.release(r.key(), r.token());
            }
        } catch (ClaimStoreException e) {
            // Still failing: what it took runs out with its lease.
        }
    }

    /** A refusal before the handler ran: reported, and returned as the decision the call throws. */
    private <T> Decision<T> refuse(ConsumerSettings s, Outcome outcome, Layer layer, String digest, String reason,
                                   long start, Throwable cause) {
        GuardEvent event = report(s, outcome, layer, digest, reason, !outcome.isPermanent(), System.nanoTime() - start);
        return Decision.of(event, null, new MessageRefusedException(outcome, s.consumer(), digest, reason, cause));
    }

    /** The one place a final decision is made into an event and told to the listeners. */
    GuardEvent report(ConsumerSettings s, Outcome outcome, Layer layer, String digest,
                      String reason, boolean retryable, long nanos) {
        GuardEvent event = new GuardEvent(s.consumer(), outcome, layer, digest, reason, nanos, retryable);
        try {
            listener.onOutcome(event);
        } catch (RuntimeException e) {
            // A broken listener must not change what happens to the message.
            java.util.logging.Logger.getLogger("dev.onceonly").log(java.util.logging.Level.FINE, "listener failed", e);
        }
        return event;
    }

    static Outcome refusedOutcome(LedgerDecision decision) {
        return decision == LedgerDecision.CONFLICT ? Outcome.CONFLICT : Outcome.RETRY;
    }

    static String refusedReason(ConsumerSettings s, LedgerDecision decision) {
        return switch (decision) {
            case CONFLICT -> conflictReason(s);
            case DUPLICATE -> "processed before (found by the ledger)";
            default -> "ledger row of a concurrent holder was not committed";
        };
    }

    /** Why a copy is a CONFLICT, naming what was compared (the consumer's pointers, never a value). */
    private static String conflictReason(ConsumerSettings s) {
        return s.conflictFields().isEmpty() ? "key was processed before with a different body"
                : "key was processed before with other values at " + String.join(",", s.conflictFields());
    }

    /**
     * A fencing token: 21 base64url characters, 126 random bits. Tokens must be unique, not secret
     * (anyone who can forge one can write to Redis anyway), and never contain {@code '|'}. Built
     * straight from bytes: one per message, so it should cost one small string and nothing more.
     */
    private static String newToken() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        byte[] token = new byte[TOKEN_CHARS];
        for (int i = 0; i < TOKEN_CHARS; i++) {
            token[i] = TOKEN_ALPHABET[r.nextInt(TOKEN_ALPHABET.length)];
        }
        return new String(token, StandardCharsets.ISO_8859_1);
    }
}
