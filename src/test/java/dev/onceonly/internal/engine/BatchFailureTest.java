package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The failure paths of a batch's guard ({@link BatchGuard}, {@link BatchCall}, the batch's done
 * marks in {@link Finaliser}): a handler's {@code Error}, a claim taken over before the commit, a
 * batch of marks whose reply was lost after it landed. Each ends with every message decided once
 * and nothing held.
 */
class BatchFailureTest extends BatchGuardTestBase {

    /**
     * The batch of marks landed but its reply was lost: the retry finds each key done with its own
     * fingerprint, which is this batch's mark, not a lost lease (as a retried single completion).
     */
    @Test
    void withoutTheLedgerABatchOfMarksThatLandedBeforeItFailedIsNotALostLease() throws Exception {
        List<RecordingDispatch> batch = dispatches("l1", "l2", "l3");
        GuardEngine engine = engine(store, ledger);
        ConsumerSettings noLedger = Settings.withLedger(Settings.defaults(consumer, KeyStrategy.CONTENT), false);
        store.failCompleteAllAfterApplying = true;

        List<Decision<String>> decisions = engine.guardAll(noLedger, batch, handler(engine, List.of(), batch));

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(0, leasesLost.get(), "its own mark is not a lost lease");
        assertEquals(0, engine.inFlight(), "each mark settled before the decisions return");
        for (RecordingDispatch d : batch) {
            assertEquals(ClaimState.DONE, claimState(keyOf(d)));
        }
    }

    /**
     * An {@code Error} of the handler (a deep payload's {@code StackOverflowError}, an
     * {@code AssertionError}) is a handler failure like any other: the batch rolls back, is split
     * down to the message that throws it, which is decided {@code FAILED} with its own error (an
     * attempt spent), and the others commit once. Nothing stays held: no claim, no call in flight,
     * so a stop does not wait.
     */
    @Test
    void aHandlerErrorIsSplitDownToItsMessageAndNothingStaysHeld() throws Exception {
        List<RecordingDispatch> batch = dispatches("e0", "e1", "e2", "e3");
        GuardEngine engine = engine(store, ledger);

        List<Decision<String>> decisions = engine.guardAll(settings, batch,
                handler(List.of(2), batch, () -> new StackOverflowError("deep payload")));
        awaitFinished(engine);

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.FAILED, Outcome.PROCESSED), outcomesOf(decisions));
        Throwable failure = decisions.get(2).failure();
        assertTrue(failure instanceof StackOverflowError, "the message's own error goes with its decision");
        assertTrue(decisions.get(2).event().retryable(), "an attempt spent, retried as any failure");
        assertEquals(List.of(List.of(0, 1, 2, 3), List.of(0, 1), List.of(2, 3), List.of(2), List.of(3)), calls);
        for (int i = 0; i < batch.size(); i++) {
            assertEquals(i == 2 ? ClaimState.ACQUIRED : ClaimState.DONE, claimState(keyOf(batch.get(i))), "message " + i + "'s claim");
            assertEquals(i == 2 ? 0 : 1, businessRows(batch.get(i)), "message " + i + "'s effect");
        }
        assertEquals(4, outcomes.size(), "each message reported once");
        assertEquals(0, engine.close(Duration.ZERO), "nothing left for a stop to wait for");
    }

    /** An {@code Error} in a caller's transaction leaves each decision pending on it with the error, and its rollback releases every claim. */
    @Test
    void aHandlerErrorInTheCallersTransactionIsPendingAndItsRollbackReleasesEveryClaim() throws Exception {
        List<RecordingDispatch> batch = dispatches("c0", "c1");
        GuardEngine engine = engine(store, ledger);

        jta.begin();
        List<Decision<String>> decisions;
        try {
            decisions = engine.guardAll(settings, batch, handler(List.of(1), batch, () -> new AssertionError("invariant")));
        } finally {
            jta.rollback();
        }
        awaitFinished(engine);

        for (Decision<String> d : decisions) {
            assertTrue(d.pending(), "left to the caller's transaction");
            Throwable failure = d.failure();
            assertTrue(failure instanceof AssertionError, "the error goes with the decision");
        }
        assertEquals(List.of(Outcome.FAILED, Outcome.FAILED), outcomes.stream().map(GuardEvent::outcome).toList());
        for (RecordingDispatch d : batch) {
            assertEquals(ClaimState.ACQUIRED, claimState(keyOf(d)), "released");
        }
    }

    /**
     * Without the ledger, a message whose claim another holder took over before the commit is
     * refused {@code RETRY} (requeued, not an attempt), as alone: it does not run its handler again
     * while the other holder runs it. The others run again together and commit.
     */
    @Test
    void aMessageWhoseClaimWasTakenOverDoesNotRunAgainAlone() throws Exception {
        ConsumerSettings noLedger = Settings.withLease(Settings.withLedger(settings, false), Duration.ofMinutes(1));
        List<RecordingDispatch> batch = dispatches("t0", "t1", "t2");
        MessageKey stolen = keyOf(batch.get(1));
        GuardEngine engine = engine(store, null);
        BatchWork<String> handler = handler(engine, List.of(), batch);

        List<Decision<String>> decisions = engine.guardAll(noLedger, batch, positions -> {
            if (calls.isEmpty()) {
                // A pause past the lease: every claim lapsed, and another holder took message 1's.
                clock.advance(Duration.ofMinutes(2));
                assertEquals(ClaimState.ACQUIRED, store.claim(stolen.storeKey(), "thief", stolen.fingerprint(),
                        Duration.ofMinutes(10)).state());
            }
            return handler.call(positions);
        });
        awaitFinished(engine);

        assertEquals(List.of(Outcome.PROCESSED, Outcome.RETRY, Outcome.PROCESSED), outcomesOf(decisions));
        assertEquals(Layer.CLAIM_STORE, decisions.get(1).event().layer());
        assertEquals(List.of(List.of(0, 1, 2), List.of(0, 2)), calls, "message 1 never ran without its claim");
        assertEquals(ClaimState.IN_PROGRESS, claimState(stolen), "still the other holder's");
        assertEquals(0, businessRows(batch.get(1)));
        assertEquals(1, businessRows(batch.get(0)));
    }
}
