package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One engine taken apart, for tests of its parts ({@link GuardedCall}, {@link HeldClaim},
 * {@link Finaliser}) driven step by step: the in-memory store behind a
 * {@link StoreFailurePolicyTest.CountingStore} (so a test can take it down), a clock for its
 * entries and one for leases that move only when the test moves them, and a listener recording
 * what it is told. A claim is taken as the engine takes it ({@link #held}).
 */
final class EngineParts implements AutoCloseable {

    final MutableClock clock = new MutableClock();
    final InMemoryClaimStore memory = new InMemoryClaimStore(1_000, clock);
    final StoreFailurePolicyTest.CountingStore store = new StoreFailurePolicyTest.CountingStore(memory);
    final AtomicLong nanos = new AtomicLong();
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    final List<GuardEvent> outcomes = new CopyOnWriteArrayList<>();
    /**
     * Everything else the listener is told, in words: "lease lost", "store error extend", "ledger INSERTED",
     * "start ledger", "end ledger".
     */
    final List<String> told = new CopyOnWriteArrayList<>();
    final GuardListener listener = new GuardListener() {
        @Override
        public void onOutcome(GuardEvent event) {
            outcomes.add(event);
        }

        @Override
        public void onLeaseRenewed(String consumer) {
            told.add("lease renewed");
        }

        @Override
        public void onLeaseLost(String consumer) {
            told.add("lease lost");
        }

        @Override
        public void onStoreError(String consumer, String operation) {
            told.add("store error " + operation);
        }

        @Override
        public void onLedgerDecision(String consumer, Ledger.LedgerDecision decision) {
            told.add("ledger " + decision);
        }

        @Override
        public Phase startPhase(String consumer, String phase) {
            told.add("start " + phase);
            return () -> told.add("end " + phase);
        }
    };
    final KeyDeriver keys = new KeyDeriver("oo:");
    final GuardEngine engine;
    final ConsumerSettings settings;

    EngineParts(Ledger ledger) {
        engine = new GuardEngine(store, TransactionRunner.NONE, ledger, scheduler, listener, keys, nanos::get);
        settings = Settings.withLedger(Settings.defaults("orders", KeyStrategy.CONTENT), ledger != null);
    }

    MessageKey key(String body) {
        return keys.derive(settings, MessageView.of("orders", "order.placed", null, Map.of(),
                body.getBytes(StandardCharsets.UTF_8)), null);
    }

    /** Claims {@code key} with {@code token} and starts the call on it, as the engine does. */
    HeldClaim held(MessageKey key, String token) {
        return held(key, token, System.nanoTime());
    }

    /** As above, the call begun at {@code start} ({@link System#nanoTime()}). */
    HeldClaim held(MessageKey key, String token, long start) {
        ClaimResult r = store.claim(key.storeKey(), token, key.fingerprint(), settings.lease());
        if (r.state() != ClaimState.ACQUIRED) {
            throw new IllegalStateException("not acquired: " + r.state());
        }
        HeldClaim held = new HeldClaim(engine.holders, settings, key, token, r.fence(), start);
        engine.started(held);
        return held;
    }

    /** Lets the claim's lease lapse and has {@code thief} take the key over. */
    void takeOver(MessageKey key, String thief) {
        clock.advance(settings.lease().plusSeconds(1));
        if (memory.claim(key.storeKey(), thief, key.fingerprint(), settings.lease()).state() != ClaimState.ACQUIRED) {
            throw new IllegalStateException("not taken over");
        }
    }

    /** {@return the state a later copy of the message finds (a claim that acquired is given back)} */
    ClaimState state(MessageKey key) {
        ClaimState state = memory.claim(key.storeKey(), "probe", key.fingerprint(), Duration.ofSeconds(1)).state();
        if (state == ClaimState.ACQUIRED) {
            memory.release(key.storeKey(), "probe");
        }
        return state;
    }

    @Override
    public void close() {
        engine.close(Duration.ZERO);
        scheduler.shutdownNow();
    }
}
