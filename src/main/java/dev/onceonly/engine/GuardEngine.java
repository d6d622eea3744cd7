package dev.onceonly.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.spi.TransactionRunner;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The guard, in plain Java: derives the key, claims it, runs the handler inside the transaction
 * (ledger row first), and finalises the claim when the transaction completed.
 *
 * <p>The contract towards the caller (the CDI interceptor, or any other adapter):
 * <ul>
 *   <li>{@link Outcome#PROCESSED}: returns what the handler returned;</li>
 *   <li>{@link Outcome#DUPLICATE}: returns {@code null} without running the handler;</li>
 *   <li>{@link Outcome#FAILED}: rethrows the handler's (or the commit's) exception, claim released;</li>
 *   <li>{@link Outcome#BUSY}, {@link Outcome#RETRY}, {@link Outcome#CONFLICT}, {@link Outcome#REJECTED}:
 *       throws {@link MessageRefusedException} without running the handler.</li>
 * </ul>
 * Every message is reported once to the {@link GuardListener} with its final outcome.
 */
public final class GuardEngine {

    private static final int TOKEN_CHARS = 21;
    private static final byte[] TOKEN_ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);

    private final ClaimStore store;
    private final TransactionRunner transactions;
    private final Ledger ledger;
    private final ScheduledExecutorService scheduler;
    private final GuardListener listener;
    private final KeyDeriver keys;

    /**
     * Claims held by running handlers, whose leases the renewal sweep keeps alive. One periodic
     * sweep for all of them rather than a scheduled task per message: scheduling and cancelling a
     * task per message woke the scheduler's thread every time, which cost a guarded message on
     * Redis about 13 us of its ~75 (BENCHMARKS.md).
     */
    private final Set<Invocation<?>> holding = ConcurrentHashMap.newKeySet();
    private final Object sweepLock = new Object();
    /** Period of the running sweep: a sixth of the shortest lease seen so far. */
    private volatile long sweepPeriodMillis = Long.MAX_VALUE;
    private ScheduledFuture<?> sweep; // guarded by sweepLock

    /**
     * @param ledger    the ledger, or {@code null} when no consumer uses one
     * @param scheduler runs the lease renewal sweep (from the first guarded message on, every sixth
     *                  of the shortest lease); must not be used for long work
     */
    public GuardEngine(ClaimStore store, TransactionRunner transactions, Ledger ledger,
                       ScheduledExecutorService scheduler, GuardListener listener, KeyDeriver keys) {
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.ledger = ledger;
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.keys = Objects.requireNonNull(keys, "keys");
    }

    public KeyDeriver keys() {
        return keys;
    }

    /**
     * Guards one message. See the class contract for results.
     *
     * @param message      the message as delivered (for payload-only methods: a view over the payload)
     * @param parameterKey value of the {@code @IdempotencyKey} parameter, or {@code null}
     */
    public <T> T guard(ConsumerSettings settings, MessageView message, Object parameterKey,
                       TransactionRunner.Work<T> handler) throws Exception {
        long start = System.nanoTime();
        MessageKey key;
        try {
            key = keys.derive(settings, message, parameterKey);
        } catch (KeyRejectedException e) {
            LogId.ONCE0302W.log(settings.consumer(), e.getMessage());
            throw refuse(settings, Outcome.REJECTED, Layer.NONE, "", e.getMessage(), start, e);
        }

        String token = newToken();
        ClaimResult claim;
        try {
            GuardListener.Phase phase = listener.startPhase(settings.consumer(), "claim");
            try {
                claim = store.claim(key.storeKey(), token, key.fingerprint(), settings.lease());
            } finally {
                phase.end();
            }
        } catch (ClaimStoreException e) {
            listener.onStoreError(settings.consumer(), "claim");
            if (settings.storeFailure() == StoreFailurePolicy.REJECT || !settings.ledger()) {
                LogId.ONCE0101W.log(store.name(), settings.consumer(), key.digest(), e.getCause(), StoreFailurePolicy.REJECT, Outcome.RETRY);
                throw refuse(settings, Outcome.RETRY, Layer.CLAIM_STORE, key.digest(), "claim store unavailable", start, e);
            }
            LogId.ONCE0101W.log(store.name(), settings.consumer(), key.digest(), e.getCause(), StoreFailurePolicy.LEDGER_ONLY, "ledger decides");
            claim = null; // go on unclaimed: the ledger's unique key is the only guard now
        }

        if (claim != null) {
            switch (claim.state()) {
                case DONE -> {
                    if (!claim.fingerprint().equals(key.fingerprint())) {
                        LogId.ONCE0301W.log(settings.consumer(), key.digest(), Layer.CLAIM_STORE);
                        throw refuse(settings, Outcome.CONFLICT, Layer.CLAIM_STORE, key.digest(),
                                "key was processed before with a different body", start, null);
                    }
                    report(settings, Outcome.DUPLICATE, Layer.CLAIM_STORE, key.digest(), "", System.nanoTime() - start);
                    return null;
                }
                case IN_PROGRESS -> throw refuse(settings, Outcome.BUSY, Layer.CLAIM_STORE, key.digest(),
                        "another holder is processing this key", start, null);
                case ACQUIRED -> { }
            }
        }

        Invocation<T> inv = new Invocation<>(settings, key, claim == null ? null : token, start, handler);
        inv.startWatchdog();
        inv.guardNanos += System.nanoTime() - start;
        try {
            return transactions.run(inv, inv);
        } catch (LedgerRefusal refusal) {
            LedgerDecision decision = inv.ledgerDecision;
            if (decision == LedgerDecision.DUPLICATE) {
                return null;
            }
            // Derived from the decision: with a joined caller transaction, completed() runs only later.
            throw new MessageRefusedException(refusedOutcome(decision), settings.consumer(), key.digest(),
                    refusedReason(decision), null);
        }
    }

    private MessageRefusedException refuse(ConsumerSettings s, Outcome outcome, Layer layer, String digest,
                                           String reason, long start, Throwable cause) {
        report(s, outcome, layer, digest, reason, System.nanoTime() - start);
        return new MessageRefusedException(outcome, s.consumer(), digest, reason, cause);
    }

    private void report(ConsumerSettings s, Outcome outcome, Layer layer, String digest, String reason, long nanos) {
        try {
            listener.onOutcome(new GuardEvent(s.consumer(), outcome, layer, digest, reason, nanos));
        } catch (RuntimeException e) {
            // A broken listener must not change what happens to the message.
            java.util.logging.Logger.getLogger("dev.onceonly").log(java.util.logging.Level.FINE, "listener failed", e);
        }
    }

    /**
     * A fencing token: 21 base64url characters, 126 random bits. Tokens must be unique, not secret
     * (anyone who can forge one can write to Redis anyway), and never contain {@code '|'}. Built
     * straight from bytes: one per message, so it should cost one small string and nothing more.
     */
    private static Outcome refusedOutcome(LedgerDecision decision) {
        return decision == LedgerDecision.CONFLICT ? Outcome.CONFLICT : Outcome.RETRY;
    }

    private static String refusedReason(LedgerDecision decision) {
        return decision == LedgerDecision.CONFLICT
                ? "key was processed before with a different body"
                : "ledger row of a concurrent holder was not committed";
    }

    private static String newToken() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        byte[] token = new byte[TOKEN_CHARS];
        for (int i = 0; i < TOKEN_CHARS; i++) {
            token[i] = TOKEN_ALPHABET[r.nextInt(TOKEN_ALPHABET.length)];
        }
        return new String(token, StandardCharsets.ISO_8859_1);
    }

    /** Starts the sweep, or makes it run more often, so that it runs at least every {@code lease}/6. */
    private void sweepAtLeastEverySixthOf(Duration lease) {
        long period = Math.max(1, lease.toMillis() / 6);
        if (period >= sweepPeriodMillis) {
            return;
        }
        synchronized (sweepLock) {
            if (period < sweepPeriodMillis) {
                if (sweep != null) {
                    sweep.cancel(false);
                }
                sweep = scheduler.scheduleAtFixedRate(this::renewDueLeases, period, period, TimeUnit.MILLISECONDS);
                sweepPeriodMillis = period;
            }
        }
    }

    /**
     * Renews every held claim that would otherwise go more than lease/3 without renewal before the
     * next sweep: renewals come every lease/6 to lease/3, never later. A store failure is retried
     * at the next sweep.
     */
    private void renewDueLeases() {
        long now = System.nanoTime();
        long period = TimeUnit.MILLISECONDS.toNanos(sweepPeriodMillis);
        for (Invocation<?> inv : holding) {
            if (now - inv.renewAtNanos >= -period) {
                try {
                    inv.renew(now);
                } catch (RuntimeException e) {
                    // One claim's failure must not end the sweep (a periodic task that throws is never run again).
                    LogId.ONCE0202W.log(inv.settings.consumer(), inv.key.digest(), e, sweepPeriodMillis);
                }
            }
        }
    }

    /** Thrown inside the transaction to roll it back when the ledger refuses the message. */
    private static final class LedgerRefusal extends RuntimeException {
        LedgerRefusal() {
            super(null, null, false, false);
        }
    }

    /**
     * State of one guarded message between claim and finalisation. It is also the transactional
     * work (ledger row, then handler) and the transaction's completion callback: one object per
     * message where lambdas would make three.
     */
    private final class Invocation<T> implements TransactionRunner.Work<T>, TransactionRunner.Completion {
        final ConsumerSettings settings;
        final MessageKey key;
        final String token; // null when running unclaimed under LEDGER_ONLY
        final long start;
        private final TransactionRunner.Work<T> handler;
        volatile long guardNanos;
        volatile LedgerDecision ledgerDecision;
        /** When the lease is due for renewal ({@link System#nanoTime()}). */
        volatile long renewAtNanos;
        private volatile boolean leaseLost;

        Invocation(ConsumerSettings settings, MessageKey key, String token, long start, TransactionRunner.Work<T> handler) {
            this.settings = settings;
            this.key = key;
            this.token = token;
            this.start = start;
            this.handler = handler;
        }

        /** Hands the claim to the renewal sweep until {@link #completed}. */
        void startWatchdog() {
            if (token == null) {
                return;
            }
            renewAtNanos = System.nanoTime() + settings.lease().toNanos() / 3;
            holding.add(this);
            sweepAtLeastEverySixthOf(settings.lease());
        }

        /** Inside the transaction: the ledger row first (when used), then the handler. */
        @Override
        public T call() throws Exception {
            if (settings.ledger()) {
                long l0 = System.nanoTime();
                GuardListener.Phase phase = listener.startPhase(settings.consumer(), "ledger");
                LedgerDecision decision;
                try {
                    decision = ledger.insert(key.storeKey(), settings.consumer(), key.bodyHashHex());
                } finally {
                    phase.end();
                }
                guardNanos += System.nanoTime() - l0;
                listener.onLedgerDecision(settings.consumer(), decision);
                if (decision != LedgerDecision.INSERTED) {
                    ledgerDecision = decision;
                    // Leaves the transaction by exception so that it rolls back; caught in guard().
                    throw new LedgerRefusal();
                }
            }
            return handler.call();
        }

        /** One lease renewal, by the sweep. A lost lease is reported once and no longer renewed. */
        void renew(long now) {
            try {
                if (store.extend(key.storeKey(), token, settings.lease()) == HolderResult.APPLIED) {
                    renewAtNanos = now + settings.lease().toNanos() / 3;
                    listener.onLeaseRenewed(settings.consumer());
                } else if (holding.remove(this)) { // not removed by completion meanwhile: really lost
                    leaseLost = true;
                    listener.onLeaseLost(settings.consumer());
                    LogId.ONCE0201W.log(settings.consumer(), key.digest(), elapsedMillis(), Durations.format(settings.lease()));
                }
            } catch (ClaimStoreException e) {
                listener.onStoreError(settings.consumer(), "extend");
                LogId.ONCE0202W.log(settings.consumer(), key.digest(), e.getCause(), sweepPeriodMillis);
            }
        }

        /** Called once, after the transaction completed. */
        @Override
        public void completed(boolean committed) {
            long f0 = System.nanoTime();
            GuardListener.Phase phase = listener.startPhase(settings.consumer(), "finalise");
            holding.remove(this);
            Outcome outcome;
            Layer layer = Layer.NONE;
            String reason = "";
            LedgerDecision decision = ledgerDecision;
            if (decision == LedgerDecision.DUPLICATE) {
                // Processed before, but the claim store forgot it (flushed, evicted, failed over):
                // remember it again so the next duplicate stops at the first layer.
                finish("complete", true);
                outcome = Outcome.DUPLICATE;
                layer = Layer.LEDGER;
            } else if (decision != null) {
                finish("release", false);
                outcome = refusedOutcome(decision);
                layer = Layer.LEDGER;
                reason = refusedReason(decision);
                if (decision == LedgerDecision.CONFLICT) {
                    LogId.ONCE0301W.log(settings.consumer(), key.digest(), Layer.LEDGER);
                }
            } else if (committed) {
                finish("complete", true);
                outcome = Outcome.PROCESSED;
            } else {
                finish("release", false);
                outcome = Outcome.FAILED;
                reason = "handler failed or transaction rolled back";
                LogId.ONCE0303I.log(settings.consumer(), key.digest(), "transaction rolled back");
            }
            phase.end();
            guardNanos += System.nanoTime() - f0;
            report(settings, outcome, layer, key.digest(), reason, guardNanos);
        }

        private void finish(String operation, boolean complete) {
            if (token == null) {
                return;
            }
            try {
                HolderResult r = complete
                        ? store.complete(key.storeKey(), token, key.fingerprint(), settings.retention())
                        : store.release(key.storeKey(), token);
                if (r == HolderResult.NOT_HOLDER && !leaseLost) {
                    listener.onLeaseLost(settings.consumer());
                    LogId.ONCE0103W.log(settings.consumer(), key.digest(), operation, elapsedMillis(), Durations.format(settings.lease()));
                }
            } catch (ClaimStoreException e) {
                listener.onStoreError(settings.consumer(), operation);
                LogId.ONCE0102W.log(store.name(), operation, settings.consumer(), key.digest(), e.getCause(),
                        Durations.format(settings.lease()));
            }
        }

        private long elapsedMillis() {
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        }
    }
}
