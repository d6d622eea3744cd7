package dev.onceonly.internal.engine;

import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A batch's messages decided before any claim (a key twice in one batch), a batch with the claim
 * store suspended (the ledger decides), and a batch of one (run as alone): their decisions, the
 * store's round trips and what the handler returned.
 */
class BatchGuardRefusalTest extends BatchGuardTestBase {

    @Test
    void aKeyTwiceInOneBatchIsBusyBeforeAnyClaim() throws Exception {
        List<RecordingDispatch> batch = dispatches("a", "a");
        GuardEngine engine = engine(store, ledger);
        List<Decision<String>> decisions = engine.guardAll(settings, batch, handler(engine, List.of(), batch));
        awaitFinished(engine);
        assertEquals(List.of(Outcome.PROCESSED, Outcome.BUSY), outcomesOf(decisions));
        assertEquals(Layer.NONE, decisions.get(1).event().layer(), "decided by the batch, not by the claim store");
        assertEquals("an earlier message of its batch has the same key", decisions.get(1).event().reason());
        assertTrue(decisions.get(1).event().guardNanos() < java.util.concurrent.TimeUnit.HOURS.toNanos(1));
    }

    @Test
    void withTheStoreSuspendedTheLedgerDecidesTheBatchWithoutAClaim() throws Exception {
        List<RecordingDispatch> batch = dispatches("a", "b");
        GuardEngine engine = engine(store, ledger);
        ConsumerSettings ledgerOnly = Settings.withStoreFailure(settings, StoreFailurePolicy.LEDGER_ONLY);
        engine.suspend();
        List<Decision<String>> decisions = engine.guardAll(ledgerOnly, batch, handler(engine, List.of(), batch));
        awaitFinished(engine);
        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(0, store.claimBatches.get(), "the suspended store is not asked");
        assertEquals(List.of(List.of(0, 1)), calls);
        assertTrue(ledgerRow(keyOf(batch.get(1)).storeKey()).isPresent());
    }

    @Test
    void aBatchOfOneReturnsTheHandlersResult() throws Exception {
        List<RecordingDispatch> batch = dispatches("a");
        GuardEngine engine = engine(store, ledger);
        List<Decision<String>> decisions = engine.guardAll(settings, batch, handler(engine, List.of(), batch));
        awaitFinished(engine);
        assertEquals("ran", decisions.get(0).resultOrThrow());
    }
}
