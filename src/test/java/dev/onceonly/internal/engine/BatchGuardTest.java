package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.jta.JtaTransactionRunner;
import dev.onceonly.internal.ledger.jpa.JpaLedger;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.ledger.jpa.ProcessedMessage;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.support.CurrentKey;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.Ledger;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guard of a batch ({@link GuardEngine#guardAll}, {@link BatchGuard}): real transactions
 * ({@link LocalJta} on H2, through the production {@link JtaTransactionRunner}), the real
 * {@link JpaLedger}, the in-memory claim store counting its round trips. Every test looks at what
 * each message's decision is, how often the handler ran with which messages, how each transaction
 * ended, and what was left behind: the claims, the ledger rows, the business rows (each message's
 * effect exactly once).
 */
class BatchGuardTest extends LedgerOnEngineTest {

    private final List<GuardEvent> outcomes = new CopyOnWriteArrayList<>();
    private final GuardListener listener = new GuardListener() {
        @Override
        public void onOutcome(GuardEvent e) {
            outcomes.add(e);
        }
    };
    private final CountingStore store = new CountingStore(new InMemoryClaimStore(10_000, clock));
    private final JpaLedger ledger = new JpaLedger("oo:", LedgerSchema.Part.LEDGER.shipped(), () -> em, jta, clock);
    private final String consumer = "batch-" + UUID.randomUUID().toString().substring(0, 8);
    private final ConsumerSettings settings = Settings.withLedger(Settings.defaults(consumer, KeyStrategy.CONTENT), true);
    /** The positions each handler call was given, in call order. */
    private final List<List<Integer>> calls = new CopyOnWriteArrayList<>();

    @Test
    void newMessagesAreClaimedInOneRoundTripAndHandledInOneTransaction() throws Exception {
        List<RecordingDispatch> batch = dispatches("a", "b", "c", "d");
        GuardEngine engine = engine(store, ledger);

        List<Decision<String>> decisions = engine.guardAll(settings, batch, handler(engine, List.of(), batch));
        awaitFinished(engine);

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(List.of(List.of(0, 1, 2, 3)), calls, "the handler ran once, with every message");
        assertEquals(List.of(true), transactionEnds, "one transaction");
        assertEquals(1, store.claimBatches.get(), "one claim round trip for the batch");
        assertEquals(0, store.singleClaims.get());
        for (RecordingDispatch d : batch) {
            MessageKey key = keyOf(d);
            assertTrue(ledgerRow(key.storeKey()).isPresent(), "a ledger row per message");
            assertEquals(ClaimState.DONE, claimState(key));
            assertEquals(1, businessRows(d), "the effect once");
        }
    }

    @Test
    void withoutTheLedgerABatchIsMarkedDoneInOneRoundTripBeforeItsDecisionsReturn() throws Exception {
        List<RecordingDispatch> batch = dispatches("a", "b", "c", "d");
        GuardEngine engine = engine(store, ledger);
        ConsumerSettings noLedger = Settings.withLedger(Settings.defaults(consumer, KeyStrategy.CONTENT), false);

        List<Decision<String>> decisions = engine.guardAll(noLedger, batch, handler(engine, List.of(), batch));

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(0, engine.inFlight(), "every mark written before the decisions return");
        assertEquals(1, store.completeBatches.get(), "one round trip for the four marks");
        assertEquals(0, store.singleCompletes.get());
        for (RecordingDispatch d : batch) {
            assertEquals(ClaimState.DONE, claimState(keyOf(d)));
        }
    }

    @Test
    void withoutTheLedgerAMarkTheBatchDidNotLandIsRetriedAlone() throws Exception {
        List<RecordingDispatch> batch = dispatches("a", "b");
        GuardEngine engine = engine(store, ledger);
        ConsumerSettings noLedger = Settings.withLedger(Settings.defaults(consumer, KeyStrategy.CONTENT), false);
        store.failCompleteAll = true;

        List<Decision<String>> decisions = engine.guardAll(noLedger, batch, handler(engine, List.of(), batch));

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(2, store.singleCompletes.get(), "each key marked on its own after the batch failed");
        for (RecordingDispatch d : batch) {
            assertEquals(ClaimState.DONE, claimState(keyOf(d)));
        }
    }

    /**
     * Issue 46, hole 10, in a batch: a body nested deeper than the JSON parser reads, on a consumer
     * keyed by a JSON Pointer. The parser's plain RuntimeException went out of the whole batch's
     * guard, and every message of the batch failed with it. It is REJECTED alone; the others run.
     */
    @Test
    void aBodyTooDeepToParseIsRejectedAloneAndTheRestOfTheBatchRuns() throws Exception {
        ConsumerSettings byPointer = Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/orderId");
        String deep = "{\"orderId\":".repeat(5_000) + "1" + "}".repeat(5_000);
        List<RecordingDispatch> batch = List.of(json("{\"orderId\":\"" + consumer + "-1\"}"), json(deep),
                json("{\"orderId\":\"" + consumer + "-2\"}"));
        GuardEngine engine = engine(store, ledger);

        List<Decision<String>> decisions = engine.guardAll(byPointer, batch, handler(engine, List.of(), batch));
        awaitFinished(engine);

        assertEquals(List.of(Outcome.PROCESSED, Outcome.REJECTED, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(List.of(List.of(0, 2)), calls, "the handler ran once, without the refused one");
    }

    private static RecordingDispatch json(String body) {
        return new RecordingDispatch(MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8)), true);
    }

    @Test
    void duplicatesAndARepeatedKeyAreDecidedWithoutTheHandler() throws Exception {
        GuardEngine engine = engine(store, ledger);
        List<RecordingDispatch> first = dispatches("a");
        engine.guardAll(settings, first, handler(engine, List.of(), first));
        awaitFinished(engine);
        calls.clear();

        List<RecordingDispatch> batch = List.of(first.get(0), dispatch("b"), dispatch("b"), dispatch("c"));
        List<Decision<String>> decisions = engine.guardAll(settings, batch, handler(engine, List.of(), batch));
        awaitFinished(engine);

        assertEquals(List.of(Outcome.DUPLICATE, Outcome.PROCESSED, Outcome.BUSY, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(Layer.CLAIM_STORE, decisions.get(0).event().layer());
        assertEquals(List.of(List.of(1, 3)), calls, "only the new messages reach the handler");
        assertEquals(1, businessRows(batch.get(0)));
        assertEquals(1, businessRows(batch.get(1)), "the second copy of b in the batch did not run");
    }

    @Test
    void aPoisonMessageIsSplitDownToItselfAndEveryOtherCommitsOnce() throws Exception {
        List<RecordingDispatch> batch = dispatches("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7");
        GuardEngine engine = engine(store, ledger);

        List<Decision<String>> decisions = engine.guardAll(settings, batch, handler(engine, List.of(5), batch));
        awaitFinished(engine);

        List<Outcome> expected = new ArrayList<>(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED,
                Outcome.PROCESSED, Outcome.PROCESSED, Outcome.FAILED, Outcome.PROCESSED, Outcome.PROCESSED));
        assertEquals(expected, outcomesOf(decisions));
        assertTrue(decisions.get(5).failure() instanceof Poison, "the poison message's own failure");
        assertEquals(List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7), List.of(0, 1, 2, 3), List.of(4, 5, 6, 7), List.of(4, 5),
                List.of(4), List.of(5), List.of(6, 7)), calls, "halves, down to the poison message alone");
        for (int i = 0; i < batch.size(); i++) {
            MessageKey key = keyOf(batch.get(i));
            assertEquals(i == 5 ? 0 : 1, businessRows(batch.get(i)), "message " + i + "'s effect");
            assertEquals(i == 5 ? ClaimState.ACQUIRED : ClaimState.DONE, claimState(key), "message " + i + "'s claim");
            assertEquals(i != 5, ledgerRow(key.storeKey()).isPresent());
        }
        assertEquals(8, outcomes.size(), "each message reported once");
    }

    @Test
    void aMessageTheLedgerRefusesIsDecidedAloneAndTheOthersRunTogether() throws Exception {
        RecordingDispatch old = dispatch("processed-before");
        GuardEngine before = engine(store, ledger);
        before.guardAll(settings, List.of(old), handler(before, List.of(), List.of(old)));
        awaitFinished(before);
        calls.clear();
        transactionEnds.clear();

        // A claim store that forgot every key (flushed, failed over): only the ledger knows the message.
        GuardEngine forgetful = engine(new CountingStore(new InMemoryClaimStore(10_000, clock)), ledger);
        List<RecordingDispatch> batch = List.of(dispatch("x"), old, dispatch("y"));
        List<Decision<String>> decisions = forgetful.guardAll(settings, batch, handler(forgetful, List.of(), batch));
        awaitFinished(forgetful);

        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(Layer.LEDGER, decisions.get(1).event().layer());
        assertEquals(List.of(List.of(0, 2)), calls, "the handler never saw the duplicate");
        assertEquals(List.of(false, false, true), transactionEnds,
                "the batch rolled back at the ledger, the duplicate alone rolled back, the others committed");
        assertEquals(1, businessRows(old));
        assertEquals(1, businessRows(batch.get(0)));
    }

    @Test
    void withoutTheLedgerEveryClaimIsConfirmedBeforeTheCommit() throws Exception {
        ConsumerSettings noLedger = Settings.withLedger(settings, false);
        List<RecordingDispatch> batch = dispatches("p", "q", "r");
        GuardEngine engine = engine(store, null);

        List<Decision<String>> decisions = engine.guardAll(noLedger, batch, handler(engine, List.of(), batch));
        awaitFinished(engine);

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(3, store.extends_.get(), "each holder proved its claim before the one commit");
        for (RecordingDispatch d : batch) {
            assertEquals(ClaimState.DONE, claimState(keyOf(d)));
            assertFalse(ledgerRow(keyOf(d).storeKey()).isPresent());
        }
    }

    @Test
    void aFailedStoreRefusesEveryMessageUnderReject() throws Exception {
        store.down = true;
        ConsumerSettings reject = Settings.withStoreFailure(settings, StoreFailurePolicy.REJECT);
        List<RecordingDispatch> batch = dispatches("s", "t");
        GuardEngine engine = engine(store, ledger);

        List<Decision<String>> decisions = engine.guardAll(reject, batch, handler(engine, List.of(), batch));

        assertEquals(List.of(Outcome.RETRY, Outcome.RETRY), outcomesOf(decisions));
        assertEquals(List.of(), calls);
        assertEquals(0, engine.inFlight());
    }

    /**
     * A batch has no single message's key, also when it runs inside another guarded handler (whose
     * key would otherwise name the batch's outbox messages and outgoing calls).
     */
    @Test
    void aBatchHandlerRunsWithoutAKeyEvenInsideAnotherGuardedHandler() throws Exception {
        List<RecordingDispatch> batch = dispatches("k1", "k2");
        GuardEngine engine = engine(store, ledger);
        List<String> seen = new CopyOnWriteArrayList<>();
        try (CurrentKey.Scope outer = CurrentKey.enter("oo:outer:key", 0)) {
            engine.guardAll(settings, batch, positions -> {
                seen.add(String.valueOf(CurrentKey.get()));
                return null;
            });
            assertEquals("oo:outer:key", CurrentKey.get(), "the outer key is back");
        }
        awaitFinished(engine);
        assertEquals(List.of("null"), seen);
    }

    // ---- helpers ----

    private GuardEngine engine(ClaimStore claimStore, Ledger l) {
        return new GuardEngine(claimStore, transactions, l, scheduler, listener, new KeyDeriver("oo:"));
    }

    /** A handler writing one business row per message it is given; it throws when given a position in {@code poison}. */
    private BatchWork<String> handler(GuardEngine engine, List<Integer> poison, List<RecordingDispatch> batch) {
        return positions -> {
            calls.add(List.copyOf(positions));
            for (int p : positions) {
                em.persist(new ProcessedMessage(businessKey(batch.get(p)) + ":" + UUID.randomUUID(), consumer,
                        "0".repeat(64), Instant.now()));
            }
            em.flush();
            if (positions.stream().anyMatch(poison::contains)) {
                throw new Poison();
            }
            return "ran";
        };
    }

    private static final class Poison extends RuntimeException {
        Poison() {
            super("poison message");
        }
    }

    private static List<Outcome> outcomesOf(List<? extends Decision<?>> decisions) {
        return decisions.stream().map(Decision::outcome).toList();
    }

    private List<RecordingDispatch> dispatches(String... bodies) {
        List<RecordingDispatch> all = new ArrayList<>();
        for (String b : bodies) {
            all.add(dispatch(b));
        }
        return all;
    }

    private RecordingDispatch dispatch(String body) {
        return new RecordingDispatch(MessageView.of("orders", "order.placed", null, Map.of(),
                (consumer + ":" + body).getBytes(StandardCharsets.UTF_8)), true);
    }

    private MessageKey keyOf(Dispatch d) {
        return new KeyDeriver("oo:").derive(settings, d.message(), null);
    }

    private String businessKey(Dispatch d) {
        return "business:" + new String(d.message().body(), StandardCharsets.UTF_8);
    }

    /** How many business rows the message's handler runs committed. */
    private long businessRows(Dispatch d) {
        return jta.call(() -> em.createQuery("select count(p) from ProcessedMessage p where p.msgId like :k", Long.class)
                .setParameter("k", businessKey(d) + ":%").getSingleResult());
    }

    private static Optional<ProcessedMessage> ledgerRow(String key) {
        return Optional.ofNullable(jta.call(() -> em.find(ProcessedMessage.class, key)));
    }

    private ClaimState claimState(MessageKey key) {
        ClaimState state = store.claim(key.storeKey(), "probe", key.fingerprint(), Duration.ofSeconds(1)).state();
        if (state == ClaimState.ACQUIRED) {
            store.release(key.storeKey(), "probe");
        }
        return state;
    }

    private static void awaitFinished(GuardEngine engine) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (engine.inFlight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(0, engine.inFlight(), "every guarded call finished, its done marker written");
    }

    /** The in-memory store's batches (a loop), counting claim round trips and extends; {@link #down} fails every call. */
    private static final class CountingStore implements BatchClaimStore {
        final AtomicInteger claimBatches = new AtomicInteger();
        final AtomicInteger singleClaims = new AtomicInteger();
        final AtomicInteger completeBatches = new AtomicInteger();
        final AtomicInteger singleCompletes = new AtomicInteger();
        final AtomicInteger extends_ = new AtomicInteger();
        volatile boolean down;
        volatile boolean failCompleteAll;
        private final BatchClaimStore inner;

        CountingStore(ClaimStore store) {
            this.inner = BatchClaimStore.inProcess(store);
        }

        private void check() {
            if (down) {
                throw new ClaimStoreException("counting", "any", new java.io.IOException("connection refused"));
            }
        }

        @Override
        public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
            check();
            claimBatches.incrementAndGet();
            return inner.claimAll(requests);
        }

        @Override
        public List<HolderResult> completeAll(List<CompleteRequest> requests) {
            check();
            completeBatches.incrementAndGet();
            if (failCompleteAll) {
                throw new ClaimStoreException("counting", "completeAll", new java.io.IOException("connection reset"));
            }
            return inner.completeAll(requests);
        }

        @Override
        public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
            check();
            if (!claims.isEmpty()) {
                claimBatches.incrementAndGet();
            }
            return inner.completeThenClaim(completions, claims);
        }

        @Override
        public boolean completesWithClaims() {
            return true;
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            check();
            if (!"probe".equals(token)) {
                singleClaims.incrementAndGet();
            }
            return inner.claim(key, token, fingerprint, lease);
        }

        @Override
        public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
            check();
            singleCompletes.incrementAndGet();
            return inner.complete(key, token, fingerprint, retention);
        }

        @Override
        public HolderResult release(String key, String token) {
            check();
            return inner.release(key, token);
        }

        @Override
        public HolderResult extend(String key, String token, Duration lease) {
            check();
            extends_.incrementAndGet();
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
