package dev.onceonly.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.support.Durations;
import dev.onceonly.support.LogId;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
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
 * Every message is reported once with its final outcome, to its {@link Dispatch} and to the
 * {@link GuardListener}. The engine imports only {@code api}, {@code spi} and {@code support}: it
 * runs without CDI (docs/architecture.md).
 */
public final class GuardEngine {

    private static final int TOKEN_CHARS = 21;
    private static final byte[] TOKEN_ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);

    private final ClaimStore store;
    private final TransactionRunner transactions;
    private final Ledger ledger;
    private final GuardListener listener;
    private final KeyDeriver keys;
    private final LeaseSweep leases;

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
        this.leases = new LeaseSweep(Objects.requireNonNull(scheduler, "scheduler"));
        this.listener = Objects.requireNonNull(listener, "listener");
        this.keys = Objects.requireNonNull(keys, "keys");
    }

    /** Stops renewing leases; claims still held lapse after their lease. */
    public void close() {
        leases.stop();
    }

    /**
     * Guards one message. See the class contract for results.
     *
     * @param dispatch     the message as delivered, and where the decision goes
     * @param parameterKey value of the {@code @IdempotencyKey} parameter, or {@code null}
     */
    public <T> T guard(ConsumerSettings settings, Dispatch dispatch, Object parameterKey,
                       TransactionRunner.Work<T> handler) throws Exception {
        long start = System.nanoTime();
        MessageKey key;
        try {
            key = keys.derive(settings, dispatch.message(), parameterKey);
        } catch (KeyRejectedException e) {
            LogId.ONCE0302W.log(settings.consumer(), e.getMessage());
            throw refuse(settings, dispatch, Outcome.REJECTED, Layer.NONE, "", e.getMessage(), start, e);
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
                throw refuse(settings, dispatch, Outcome.RETRY, Layer.CLAIM_STORE, key.digest(), "claim store unavailable", start, e);
            }
            LogId.ONCE0101W.log(store.name(), settings.consumer(), key.digest(), e.getCause(), StoreFailurePolicy.LEDGER_ONLY, "ledger decides");
            claim = null; // go on unclaimed: the ledger's unique key is the only guard now
        }

        if (claim != null) {
            switch (claim.state()) {
                case DONE -> {
                    if (!claim.fingerprint().equals(key.fingerprint())) {
                        LogId.ONCE0301W.log(settings.consumer(), key.digest(), Layer.CLAIM_STORE);
                        throw refuse(settings, dispatch, Outcome.CONFLICT, Layer.CLAIM_STORE, key.digest(),
                                "key was processed before with a different body", start, null);
                    }
                    report(settings, dispatch, Outcome.DUPLICATE, Layer.CLAIM_STORE, key.digest(), "", System.nanoTime() - start);
                    return null;
                }
                case IN_PROGRESS -> throw refuse(settings, dispatch, Outcome.BUSY, Layer.CLAIM_STORE, key.digest(),
                        "another holder is processing this key", start, null);
                case ACQUIRED -> { }
            }
        }

        Invocation<T> inv = new Invocation<>(settings, dispatch, key, claim == null ? null : token, start, handler);
        inv.holdLease();
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

    private MessageRefusedException refuse(ConsumerSettings s, Dispatch dispatch, Outcome outcome, Layer layer,
                                           String digest, String reason, long start, Throwable cause) {
        report(s, dispatch, outcome, layer, digest, reason, System.nanoTime() - start);
        return new MessageRefusedException(outcome, s.consumer(), digest, reason, cause);
    }

    /** The one place a decision leaves the engine: to the delivery first, then to the listeners. */
    private void report(ConsumerSettings s, Dispatch dispatch, Outcome outcome, Layer layer, String digest,
                        String reason, long nanos) {
        GuardEvent event = new GuardEvent(s.consumer(), outcome, layer, digest, reason, nanos);
        dispatch.decided(event);
        try {
            listener.onOutcome(event);
        } catch (RuntimeException e) {
            // A broken listener must not change what happens to the message.
            java.util.logging.Logger.getLogger("dev.onceonly").log(java.util.logging.Level.FINE, "listener failed", e);
        }
    }

    private static Outcome refusedOutcome(LedgerDecision decision) {
        return decision == LedgerDecision.CONFLICT ? Outcome.CONFLICT : Outcome.RETRY;
    }

    private static String refusedReason(LedgerDecision decision) {
        return decision == LedgerDecision.CONFLICT
                ? "key was processed before with a different body"
                : "ledger row of a concurrent holder was not committed";
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
    private final class Invocation<T> implements TransactionRunner.Work<T>, TransactionRunner.Completion, LeaseSweep.Lease {
        final ConsumerSettings settings;
        final Dispatch dispatch;
        final MessageKey key;
        final String token; // null when running unclaimed under LEDGER_ONLY
        final long start;
        private final TransactionRunner.Work<T> handler;
        volatile long guardNanos;
        volatile LedgerDecision ledgerDecision;
        /** When the lease is due for renewal ({@link System#nanoTime()}). */
        volatile long renewAtNanos;
        private volatile boolean leaseLost;

        Invocation(ConsumerSettings settings, Dispatch dispatch, MessageKey key, String token, long start,
                   TransactionRunner.Work<T> handler) {
            this.settings = settings;
            this.dispatch = dispatch;
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
            renewAtNanos = System.nanoTime() + settings.lease().toNanos() / 3;
            leases.hold(this, settings.lease());
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
        @Override
        public void renew(long now) {
            try {
                if (store.extend(key.storeKey(), token, settings.lease()) == HolderResult.APPLIED) {
                    renewAtNanos = now + settings.lease().toNanos() / 3;
                    listener.onLeaseRenewed(settings.consumer());
                } else if (leases.drop(this)) { // not removed by completion meanwhile: really lost
                    leaseLost = true;
                    listener.onLeaseLost(settings.consumer());
                    LogId.ONCE0201W.log(settings.consumer(), key.digest(), elapsedMillis(), Durations.format(settings.lease()));
                }
            } catch (ClaimStoreException e) {
                listener.onStoreError(settings.consumer(), "extend");
                LogId.ONCE0202W.log(settings.consumer(), key.digest(), e.getCause(), leases.periodMillis());
            }
        }

        /** Called once, after the transaction completed. */
        @Override
        public void completed(boolean committed) {
            long f0 = System.nanoTime();
            GuardListener.Phase phase = listener.startPhase(settings.consumer(), "finalise");
            leases.drop(this);
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
            report(settings, dispatch, outcome, layer, key.digest(), reason, guardNanos);
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
