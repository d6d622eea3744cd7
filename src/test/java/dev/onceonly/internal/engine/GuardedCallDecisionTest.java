package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.engine.GuardEngineLedgerTest.ScriptedLedger;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One guarded call driven step by step as a transaction runner drives it ({@link EngineParts}):
 * its work, the check before the commit, the completion, and the decision, in the orders a runner
 * of its own and a caller's still open transaction (the decision before the completion) make them.
 * Each test looks at the decision, the claim left in the store and what was reported and logged.
 */
class GuardedCallDecisionTest {

    private EngineParts parts;
    private final LogCapture log = new LogCapture();

    @AfterEach
    void stop() {
        log.close();
        parts.close();
    }

    private GuardedCall<String> call(Ledger ledger, String body, boolean claimed) {
        parts = new EngineParts(ledger);
        MessageKey key = parts.key(body);
        HeldClaim held = claimed ? parts.held(key, "t1") : null;
        if (!claimed) {
            parts.engine.started(null);
        }
        return new GuardedCall<>(parts.engine.calls, parts.settings, key, held, 0, () -> "ran");
    }

    @Test
    void aLedgerConflictIsReleasedReportedAsPermanentAndLogged() throws Exception {
        GuardedCall<String> call = call(ScriptedLedger.answering(LedgerDecision.CONFLICT), "c", true);
        Exception thrown = assertThrows(GuardedCall.LedgerRefusal.class, call::call);
        call.completed(false);
        Decision<String> d = call.decision(null, thrown);
        assertEquals(Outcome.CONFLICT, d.outcome());
        assertEquals(Layer.LEDGER, d.event().layer());
        assertFalse(d.event().retryable(), "a conflict stays one");
        assertEquals(Outcome.CONFLICT, d.refusal().outcome());
        assertEquals(ClaimState.ACQUIRED, parts.state(parts.key("c")), "released, not marked done");
        assertEquals(1, log.lines("ONCE0301W").size(), log.lines().toString());
        assertEquals(0, parts.engine.inFlight());
        assertEquals(List.of("start ledger", "end ledger", "ledger CONFLICT", "start finalise", "end finalise"), parts.told);
    }

    @Test
    void aLedgerRowNotCommittedByItsHolderIsARetryableRetryNotLoggedAsAConflict() throws Exception {
        GuardedCall<String> call = call(ScriptedLedger.answering(LedgerDecision.RETRY), "r", true);
        Exception thrown = assertThrows(GuardedCall.LedgerRefusal.class, call::call);
        call.completed(false);
        GuardEvent e = call.decision(null, thrown).event();
        assertEquals(Outcome.RETRY, e.outcome());
        assertTrue(e.retryable());
        assertFalse(log.contains("ONCE0301W"));
    }

    @Test
    void aCommitThatFailedAfterTheHandlerReturnedIsARetryableFailure() throws Exception {
        GuardedCall<String> call = call(null, "f", true);
        assertEquals("ran", call.call());
        assertTrue(call.mayCommit());
        call.completed(false);
        IllegalStateException commitFailed = new IllegalStateException("commit failed");
        Decision<String> d = call.decision(null, commitFailed);
        assertEquals(Outcome.FAILED, d.outcome());
        assertEquals("handler failed or transaction rolled back", d.event().reason());
        assertTrue(d.event().retryable());
        assertSame(commitFailed, d.failure(), "the caller sees the commit's own exception");
        assertEquals(ClaimState.ACQUIRED, parts.state(parts.key("f")));
    }

    @Test
    void withoutTheLedgerAClaimTakenOverBeforeTheCommitRefusesIt() throws Exception {
        GuardedCall<String> call = call(null, "t", true);
        call.call();
        parts.takeOver(parts.key("t"), "thief");
        assertFalse(call.mayCommit());
        call.completed(false);
        Decision<String> d = call.decision(null, new IllegalStateException("rolled back"));
        assertEquals(Outcome.RETRY, d.outcome());
        assertEquals(Layer.CLAIM_STORE, d.event().layer());
        assertInstanceOf(MessageRefusedException.class, d.failure());
    }

    @Test
    void withTheLedgerNothingIsProvedBeforeTheCommit() throws Exception {
        GuardedCall<String> call = call(ScriptedLedger.answering(LedgerDecision.INSERTED), "l", true);
        call.call();
        parts.takeOver(parts.key("l"), "thief");
        assertTrue(call.mayCommit(), "its unique key stops a second commit");
        call.completed(true);
        assertEquals(Outcome.PROCESSED, call.decision("ran", null).outcome());
    }

    @Test
    void aRefusalTheHandlerPassedOnRefusesTheMessageTheSameWayAndIsLogged() throws Exception {
        parts = new EngineParts(null);
        MessageKey key = parts.key("p");
        GuardedCall<String> call = new GuardedCall<>(parts.engine.calls, parts.settings, key, parts.held(key, "t1"), 0, () -> {
            throw new MessageRefusedException(Outcome.BUSY, "stock", "d", "another holder is processing this key", null);
        });
        Exception thrown = assertThrows(MessageRefusedException.class, call::call);
        call.completed(false);
        GuardEvent e = call.decision(null, thrown).event();
        assertEquals(Outcome.BUSY, e.outcome());
        assertTrue(e.retryable());
        assertTrue(e.reason().startsWith("a guarded call of the handler was refused BUSY"), e.reason());
        assertEquals(1, log.lines("ONCE0303I").size(), log.lines().toString());
        assertEquals(ClaimState.ACQUIRED, parts.state(key), "released");
    }

    /**
     * The time reported is the guard's: the claim's (given), the ledger's insert and the finalisation,
     * added up. The ledger here takes at least 200 ms, so the figure cannot stay at the claim's alone.
     */
    @Test
    void theReportedTimeAddsTheLedgersInsertToTheClaimsTime() throws Exception {
        long claimNanos = TimeUnit.SECONDS.toNanos(10);
        long ledgerNanos = TimeUnit.MILLISECONDS.toNanos(200);
        Ledger slow = new ScriptedLedger(LedgerDecision.INSERTED, null) {
            @Override
            public LedgerDecision insert(String key, String consumer, String bodyHash) {
                long until = System.nanoTime() + ledgerNanos;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                return super.insert(key, consumer, bodyHash);
            }
        };
        parts = new EngineParts(slow);
        MessageKey key = parts.key("time");
        GuardedCall<String> call = new GuardedCall<>(parts.engine.calls, parts.settings, key, parts.held(key, "t1"), claimNanos,
                () -> "ran");
        call.call();
        call.completed(true);
        long reported = call.decision("ran", null).event().guardNanos();
        assertTrue(reported >= claimNanos + ledgerNanos && reported < TimeUnit.HOURS.toNanos(1), reported + " ns");
    }

    // ---- decisions made while the caller's transaction is still open ----

    @Test
    void aLedgerConflictInAnOpenTransactionIsRefusedAsAConflictWithoutMarkingTheKeyDone() throws Exception {
        GuardedCall<String> call = call(ScriptedLedger.answering(LedgerDecision.CONFLICT), "oc", true);
        Exception thrown = assertThrows(GuardedCall.LedgerRefusal.class, call::call);
        Decision<String> d = call.decision(null, thrown);
        assertTrue(d.pending());
        assertEquals(Outcome.CONFLICT, d.outcome());
        assertEquals(Layer.LEDGER, d.event().layer());
        assertEquals(Outcome.CONFLICT, d.refusal().outcome());
        assertTrue(d.event().reason().contains("rollback-only"), d.event().reason());
        assertEquals(ClaimState.IN_PROGRESS, parts.state(parts.key("oc")), "still held, not done");
        call.completed(false);
        assertEquals(ClaimState.ACQUIRED, parts.state(parts.key("oc")));
    }

    @Test
    void aLedgerDuplicateInAnOpenTransactionIsMarkedDoneAndTheCallEndsWithIt() throws Exception {
        GuardedCall<String> call = call(ScriptedLedger.answering(LedgerDecision.DUPLICATE), "od", true);
        Exception thrown = assertThrows(GuardedCall.LedgerRefusal.class, call::call);
        Decision<String> d = call.decision(null, thrown);
        assertEquals(Outcome.DUPLICATE, d.refusal().outcome());
        assertEquals(ClaimState.DONE, parts.state(parts.key("od")));
        assertEquals(1, parts.engine.inFlight(), "unfinished until the transaction ends");
        call.completed(false);
        assertEquals(0, parts.engine.inFlight());
    }

    @Test
    void aLedgerDuplicateWithoutAClaimInAnOpenTransactionIsRefusedAsADuplicate() throws Exception {
        GuardedCall<String> call = call(ScriptedLedger.answering(LedgerDecision.DUPLICATE), "nc", false);
        Exception thrown = assertThrows(GuardedCall.LedgerRefusal.class, call::call);
        assertEquals(Outcome.DUPLICATE, call.decision(null, thrown).refusal().outcome());
        call.completed(false);
        assertEquals(0, parts.engine.inFlight());
    }

    @Test
    void aHandlerFailureInAnOpenTransactionIsKnownAsAFailureAndASuccessAsProcessed() throws Exception {
        GuardedCall<String> call = call(null, "of", true);
        IllegalStateException failure = new IllegalStateException("stock service down");
        Decision<String> failed = call.decision(null, failure);
        assertTrue(failed.pending());
        assertEquals(Outcome.FAILED, failed.outcome());
        assertEquals(Layer.NONE, failed.event().layer());
        assertEquals("handler failed", failed.event().reason());
        assertSame(failure, failed.failure());

        Decision<String> returned = call.decision("ran", null);
        assertEquals(Outcome.PROCESSED, returned.outcome());
        assertEquals(Layer.NONE, returned.event().layer());
        assertEquals("", returned.event().reason());
        assertNull(returned.failure());
    }
}
