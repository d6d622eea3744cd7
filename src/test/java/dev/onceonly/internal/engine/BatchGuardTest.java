package dev.onceonly.internal.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.jta.JtaTransactionRunner;
import dev.onceonly.internal.ledger.jpa.JpaLedger;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.support.CurrentKey;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

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
class BatchGuardTest extends BatchGuardTestBase {

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
}
