package dev.onceonly.internal.engine;

import dev.onceonly.testing.Guarded;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store-failure policy, decided per message: a store that fails or is suspended refuses the
 * message (RETRY) under {@code reject}, and under {@code ledger-only} lets the ledger alone guard it,
 * but only for a consumer that has a ledger. No database: a ledger that inserts every key.
 */
class StoreFailurePolicyTest {

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<GuardEvent> events = new CopyOnWriteArrayList<>();
    private final CountingStore store = new CountingStore(new InMemoryClaimStore(1_000, new MutableClock()));
    private final AtomicInteger inserts = new AtomicInteger();
    private final Ledger ledger = new Ledger() {
        @Override
        public LedgerDecision insert(String key, String consumer, String bodyHash) {
            inserts.incrementAndGet();
            return LedgerDecision.INSERTED;
        }

        @Override
        public void checkReady() {
        }

        @Override
        public long purge(Instant olderThan, int batchSize) {
            return 0;
        }
    };
    private final GuardEngine engine = new GuardEngine(store, TransactionRunner.NONE, ledger, scheduler, events::add,
            new KeyDeriver("oo:"));
    private final ConsumerSettings reject = Settings.defaults("orders", KeyStrategy.CONTENT);
    private final ConsumerSettings ledgerOnly = Settings.withLedger(Settings.withStoreFailure(reject, StoreFailurePolicy.LEDGER_ONLY), true);

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private static Dispatch message(String body) {
        return Dispatch.of(MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8)));
    }

    private String guard(ConsumerSettings s, String body) throws Exception {
        return Guarded.call(engine, s, message(body), null, () -> "ran");
    }

    @Test
    void aFailingStoreUnderRejectRefusesWithRetryAndRunsNothing() {
        store.down = true;
        MessageRefusedException e;
        try (LogCapture log = new LogCapture()) {
            e = assertThrows(MessageRefusedException.class, () -> guard(reject, "m"));
            assertTrue(log.lines().get(0).startsWith("ONCE0101W: Claim store 'counting' unavailable for consumer 'orders' (key "),
                    log.lines().toString());
            assertTrue(log.lines().get(0).endsWith("policy REJECT applied, outcome RETRY"), log.lines().toString());
        }
        assertEquals(Outcome.RETRY, e.outcome());
        assertEquals("claim store unavailable", e.reason());
        assertEquals(Layer.CLAIM_STORE, events.get(0).layer());
        assertTrue(events.get(0).retryable());
    }

    /** ledger-only without a ledger would guard nothing: such a consumer is refused like under reject. */
    @Test
    void ledgerOnlyWithoutALedgerIsRefusedToo() {
        store.down = true;
        ConsumerSettings noLedger = Settings.withLedger(ledgerOnly, false);
        assertEquals(Outcome.RETRY, assertThrows(MessageRefusedException.class, () -> guard(noLedger, "m")).outcome());
        assertEquals(0, inserts.get());
    }

    @Test
    void aFailingStoreUnderLedgerOnlyLetsTheLedgerGuard() throws Exception {
        store.down = true;
        try (LogCapture log = new LogCapture()) {
            assertEquals("ran", guard(ledgerOnly, "m"));
            assertTrue(log.lines().get(0).endsWith("policy LEDGER_ONLY applied, outcome ledger decides"), log.lines().toString());
        }
        assertEquals(1, inserts.get());
        assertEquals(Outcome.PROCESSED, events.get(0).outcome());
    }

    @Test
    void aSuspendedStoreIsNotAskedAndResumingAsksItAgain() throws Exception {
        assertFalse(engine.suspended());
        LogCapture log = new LogCapture();
        engine.suspend();
        engine.suspend();
        assertEquals(List.of("ONCE0011W"), log.lines().stream().map(l -> l.substring(0, 9)).toList(), "said once");
        assertTrue(engine.suspended());
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> guard(reject, "a"));
        assertEquals(Outcome.RETRY, e.outcome());
        assertEquals("claim store suspended", e.reason());
        assertEquals("ran", guard(ledgerOnly, "b"), "ledger-only: the ledger alone guards");
        assertEquals(0, store.claims.get(), "a suspended store is never asked");

        engine.resume();
        engine.resume();
        log.close();
        assertEquals(List.of("ONCE0011W", "ONCE0012I"), log.lines().stream().map(l -> l.substring(0, 9)).toList(),
                "suspended and resumed, each said once; a suspended store's refusals are not logged per message");
        assertFalse(engine.suspended());
        assertEquals("ran", guard(reject, "c"));
        assertEquals(1, store.claims.get());
    }

    /**
     * Counts claims, and fails every call while {@link #down}, or while {@link #broken} with an
     * exception the store contract does not allow. Also {@link GuardedCallReportTest}'s and
     * {@link DoneWriterTest}'s.
     */
    static final class CountingStore implements ClaimStore {
        private final ClaimStore inner;
        final AtomicInteger claims = new AtomicInteger();
        volatile boolean down;
        volatile boolean broken;

        CountingStore(ClaimStore inner) {
            this.inner = inner;
        }

        private void check(String operation) {
            if (down) {
                throw new ClaimStoreException("counting", operation, new IOException("down"));
            }
            if (broken) {
                throw new IllegalStateException("a bug in the store's " + operation);
            }
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            check("claim");
            claims.incrementAndGet();
            return inner.claim(key, token, fingerprint, lease);
        }

        @Override
        public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
            check("complete");
            return inner.complete(key, token, fingerprint, retention);
        }

        @Override
        public HolderResult release(String key, String token) {
            check("release");
            return inner.release(key, token);
        }

        @Override
        public HolderResult extend(String key, String token, Duration lease) {
            check("extend");
            return inner.extend(key, token, lease);
        }

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public Optional<String> problem() {
            return Optional.empty();
        }

        @Override
        public void close() {
        }
    }
}
