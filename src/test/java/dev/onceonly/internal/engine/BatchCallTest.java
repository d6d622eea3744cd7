package dev.onceonly.internal.engine;

import dev.onceonly.api.Outcome;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One transaction of a batch driven step by step as a transaction runner drives it
 * ({@link EngineParts}): which messages the ledger's answers single out, the check before the
 * commit, and how the batch ends (decided, singled out, split, or left to the caller's transaction);
 * each test looks at the decisions, the claims in the store and the count of unfinished calls.
 */
class BatchCallTest {

    private EngineParts parts;
    private final List<List<Integer>> handled = new ArrayList<>();
    /** When the batch began ({@link System#nanoTime()}): its claims' time counts in what the guard reports. */
    private long start = System.nanoTime();

    @AfterEach
    void stop() {
        parts.close();
    }

    /** The batch of {@code bodies}, each claimed but those at {@code unclaimed} (the ledger decides them). */
    private BatchCall<String> batch(Ledger ledger, List<BatchGuard.Element> elements, int unclaimed, String... bodies) {
        if (parts != null) {
            parts.close();
        }
        parts = new EngineParts(ledger);
        for (int i = 0; i < bodies.length; i++) {
            BatchGuard.Element e = new BatchGuard.Element(i, parts.key(bodies[i]));
            if (i == unclaimed) {
                parts.engine.started(null);
            } else {
                e.held = parts.held(e.key, e.token);
            }
            elements.add(e);
        }
        return new BatchCall<>(parts.engine, parts.settings, elements, positions -> {
            handled.add(List.copyOf(positions));
            return "ran";
        }, start);
    }

    /** A ledger answering {@code answers} to a batch's rows (a {@code null}: a row it did not try). */
    private static Ledger answering(LedgerDecision... answers) {
        return new Ledger() {
            @Override
            public LedgerDecision insert(String key, String consumer, String bodyHash) {
                throw new UnsupportedOperationException("a batch inserts all at once");
            }

            @Override
            public List<LedgerDecision> insertAll(List<Row> rows) {
                return Arrays.asList(answers);
            }

            @Override
            public void checkReady() {
            }

            @Override
            public long purge(Instant olderThan, int batchSize) {
                return 0;
            }
        };
    }

    private static List<Decision<String>> slots(int n) {
        return new ArrayList<>(Collections.nCopies(n, null));
    }

    @Test
    void theRowsTheLedgerRefusedAreSingledOutAndTheRowsItDidNotTryAreNot() {
        List<BatchGuard.Element> elements = new ArrayList<>();
        BatchCall<String> call = batch(answering(LedgerDecision.INSERTED, LedgerDecision.CONFLICT, null), elements, -1,
                "a", "b", "c");
        GuardedCall.LedgerRefusal refusal = assertThrows(GuardedCall.LedgerRefusal.class, call::call);
        assertEquals(List.of(elements.get(1)), call.singledOut());
        assertEquals(List.of(), handled, "the handler did not run");
        assertEquals(List.of("start ledger", "end ledger"), parts.told, "the refused one is told when decided alone");
        call.completed(false);
        assertEquals(BatchCall.Ending.SINGLE_OUT, call.ended(null, refusal, slots(3)));
        assertEquals(ClaimState.IN_PROGRESS, parts.state(elements.get(0).key), "held for the batch's next run");
    }

    @Test
    void aBatchTheLedgerInsertedWholeRunsTheHandlerWithEveryPositionAndCommits() throws Exception {
        List<BatchGuard.Element> elements = new ArrayList<>();
        BatchCall<String> call = batch(answering(LedgerDecision.INSERTED, LedgerDecision.INSERTED), elements, 1, "a", "b");
        assertEquals("ran", call.call());
        assertEquals(List.of(List.of(0, 1)), handled);
        assertEquals(List.of("start ledger", "end ledger", "ledger INSERTED", "ledger INSERTED"), parts.told);
        parts.takeOver(elements.get(0).key, "thief");
        assertTrue(call.mayCommit(), "with the ledger on, its unique key stops a second commit");
        call.completed(true);
        List<Decision<String>> decisions = slots(2);
        assertEquals(BatchCall.Ending.DECIDED, call.ended("ran", null, decisions));
        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED), decisions.stream().map(Decision::outcome).toList());
        parts.engine.close(java.time.Duration.ofSeconds(5)); // writes the deferred mark
        assertEquals(0, parts.engine.inFlight(), "the unclaimed one finished too");
    }

    @Test
    void withoutTheLedgerAClaimTakenOverBeforeTheCommitIsSingledOut() throws Exception {
        List<BatchGuard.Element> elements = new ArrayList<>();
        BatchCall<String> call = batch(null, elements, -1, "a", "b");
        call.call();
        parts.takeOver(elements.get(1).key, "thief");
        assertFalse(call.mayCommit());
        assertEquals(List.of(elements.get(1)), call.singledOut());
        call.completed(false);
        assertEquals(BatchCall.Ending.SINGLE_OUT, call.ended(null, new IllegalStateException("rolled back"), slots(2)));
    }

    @Test
    void aCommittedBatchIsMarkedDoneAndAFailedOneSplits() throws Exception {
        List<BatchGuard.Element> elements = new ArrayList<>();
        BatchCall<String> call = batch(null, elements, -1, "a", "b");
        call.call();
        assertTrue(call.mayCommit());
        call.completed(true);
        call.ended("ran", null, slots(2));
        assertEquals(ClaimState.DONE, parts.state(elements.get(1).key));
        assertEquals(0, parts.engine.holders.leases().held(), "no lease renewed once finished");
        assertEquals(0, parts.engine.inFlight());

        List<BatchGuard.Element> failing = new ArrayList<>();
        BatchCall<String> failed = batch(null, failing, -1, "c", "d");
        failed.completed(false);
        assertEquals(BatchCall.Ending.SPLIT, failed.ended(null, new IllegalStateException("handler failed"), slots(2)));
        assertEquals(ClaimState.IN_PROGRESS, parts.state(failing.get(0).key), "held for the halves");
        assertEquals(2, parts.engine.inFlight());
    }

    @Test
    void inTheCallersTransactionEachMessageIsPendingAndDecidedAsItEnds() throws Exception {
        List<BatchGuard.Element> elements = new ArrayList<>();
        BatchCall<String> call = batch(null, elements, -1, "a", "b");
        List<Decision<String>> decisions = slots(2);
        assertEquals(BatchCall.Ending.DECIDED, call.ended(null, new IllegalStateException("handler failed"), decisions));
        assertTrue(decisions.get(1).pending());
        assertEquals(Outcome.FAILED, decisions.get(1).outcome());
        assertEquals("handler failed", decisions.get(1).event().reason());
        call.completed(false);
        assertEquals(List.of(Outcome.FAILED, Outcome.FAILED), parts.outcomes.stream().map(e -> e.outcome()).toList());
        assertEquals(ClaimState.ACQUIRED, parts.state(elements.get(0).key), "released: nobody runs it again");
        assertEquals(0, parts.engine.inFlight());

        List<BatchGuard.Element> returning = new ArrayList<>();
        BatchCall<String> ok = batch(null, returning, -1, "c");
        List<Decision<String>> known = slots(1);
        ok.ended("ran", null, known);
        assertEquals(Outcome.PROCESSED, known.get(0).outcome());
        assertEquals("", known.get(0).event().reason());
    }

    /** The time reported is the guard's since the batch began, the handler's left out: here 10 s of claiming. */
    @Test
    void theReportedTimeIsTheGuardsSinceTheBatchBegan() throws Exception {
        start = System.nanoTime() - TimeUnit.SECONDS.toNanos(10);
        List<BatchGuard.Element> elements = new ArrayList<>();
        BatchCall<String> call = batch(null, elements, -1, "a");
        call.call();
        call.completed(true);
        assertGuardTime(parts.outcomes.get(0).guardNanos());

        BatchCall<String> open = batch(null, new ArrayList<>(), -1, "b");
        open.call();
        List<Decision<String>> known = slots(1);
        open.ended("ran", null, known);
        assertGuardTime(known.get(0).event().guardNanos());
    }

    private static void assertGuardTime(long nanos) {
        assertTrue(nanos >= TimeUnit.SECONDS.toNanos(10) && nanos < TimeUnit.HOURS.toNanos(1), nanos + " ns");
    }
}
