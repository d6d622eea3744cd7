package dev.onceonly.internal.engine;

import dev.onceonly.spi.ClaimState;
import dev.onceonly.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the finaliser does with claims once their transaction completed ({@link EngineParts}): a
 * batch's marks, the answers that send a mark on alone, completions the store failed, and the count
 * of unfinished calls that {@link Finaliser#close} waits for.
 */
class FinaliserTest {

    private final EngineParts parts = new EngineParts(null);
    private final Finaliser finaliser = parts.engine.finaliser;

    @AfterEach
    void stop() {
        parts.close();
    }

    @Test
    void aBatchedMarkFoundNotOursIsTakenAgainWhenNobodyHoldsTheKey() {
        MessageKey a = parts.key("a");
        MessageKey b = parts.key("b");
        HeldClaim first = parts.held(a, "t1");
        HeldClaim second = parts.held(b, "t2");
        parts.clock.advance(parts.settings.lease().plusSeconds(1)); // both lapsed, nobody took them
        finaliser.completeAll(List.of(first, second));
        assertEquals(ClaimState.DONE, parts.state(a));
        assertEquals(ClaimState.DONE, parts.state(b));
        assertEquals(0, finaliser.inFlight());
    }

    @Test
    void aBatchOfMarksTheStoreFailedGoesOnAloneAndIsReported() {
        HeldClaim held = parts.held(parts.key("a"), "t1");
        parts.store.down = true;
        finaliser.completeAll(List.of(held));
        assertEquals(List.of("store error complete", "store error complete"), parts.told, "the batch's, then its own");
        assertEquals(1, finaliser.completionsRetried(), "retried later, alone");
        assertEquals(1, finaliser.inFlight());
    }

    @Test
    void aBatchWithNothingToMarkWritesNothing() {
        finaliser.completeAll(List.of());
        assertEquals(List.of(), parts.told);
        assertEquals(0, finaliser.inFlight());
    }

    @Test
    void aCallFinishedTwiceIsCountedOnce() {
        HeldClaim held = parts.held(parts.key("a"), "t1");
        parts.held(parts.key("b"), "t2");
        finaliser.release(held);
        finaliser.release(held);
        assertEquals(1, finaliser.inFlight(), "the other call still counts");
    }

    @Test
    void closeWaitsForACallThatFinishesWhileItWaits() throws Exception {
        HeldClaim held = parts.held(parts.key("a"), "t1");
        CompletableFuture<Void> finishing = CompletableFuture.runAsync(() -> {
            while (!finaliser.closing()) {
                Thread.onSpinWait();
            }
            finaliser.release(held);
        });
        assertEquals(0, finaliser.close(Duration.ofMinutes(1)));
        finishing.get();
    }

    @Test
    void anInterruptedCloseGivesUpAndKeepsTheInterrupt() {
        parts.held(parts.key("a"), "t1");
        Thread.currentThread().interrupt();
        try {
            assertEquals(1, finaliser.close(Duration.ofMinutes(1)));
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aReleaseTheStoreFailedIsReportedAndTheCallFinishedAnyway() {
        HeldClaim held = parts.held(parts.key("a"), "t1");
        parts.store.down = true;
        try (LogCapture log = new LogCapture()) {
            finaliser.release(held);
            assertEquals(1, log.lines("ONCE0102W").size(), log.lines().toString());
        }
        assertEquals(List.of("store error release"), parts.told);
        assertEquals(0, finaliser.inFlight(), "left to run out with its lease");
    }

    @Test
    void aMarkMadeBeforeTheTransactionEndedStopsTheRenewalsAndReportsAClaimTakenOver() {
        HeldClaim held = parts.held(parts.key("a"), "t1");
        assertTrue(finaliser.markNow(held));
        assertEquals(ClaimState.DONE, parts.state(parts.key("a")));
        assertEquals(0, parts.engine.holders.leases().held(), "done: nothing to renew");
        assertEquals(1, finaliser.inFlight(), "unfinished until its transaction ends");

        HeldClaim taken = parts.held(parts.key("b"), "t2");
        parts.takeOver(parts.key("b"), "thief");
        finaliser.markNow(taken);
        assertEquals(List.of("lease lost"), parts.told);
    }

    @Test
    void aMarkTheStoreFailedBeforeTheTransactionEndedIsLeftToTheCompletion() {
        HeldClaim held = parts.held(parts.key("a"), "t1");
        parts.store.down = true;
        assertFalse(finaliser.markNow(held));
        assertEquals(List.of("store error complete"), parts.told);
        assertEquals(1, parts.engine.holders.leases().held(), "still renewed until the completion");
    }
}
