package dev.onceonly.internal.engine;

import dev.onceonly.spi.ClaimState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
