package dev.onceonly.internal.memory;

import dev.onceonly.contract.ClaimStoreContract;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.MemoryTtl;
import dev.onceonly.testing.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store contract on the in-memory store, with a clock the test moves (no sleeping). */
class InMemoryClaimStoreTest extends ClaimStoreContract<InMemoryClaimStore> {

    private final MutableClock clock = new MutableClock();

    @Override
    protected InMemoryClaimStore newStore() {
        return new InMemoryClaimStore(100_000, clock);
    }

    @Override
    protected void elapse(Duration d) {
        clock.advance(d);
    }

    @Override
    protected long pttl(String key) {
        return MemoryTtl.pttl(store, key);
    }

    @Override
    protected String newPrefix() {
        return "mem:";
    }

    /** Chosen for development, it says so, with its bound: claims are neither shared nor kept. */
    @Test
    void theDevelopmentStoreWarnsThatItIsForDevelopmentOnly() {
        try (LogCapture log = new LogCapture()) {
            InMemoryClaimStore.forDevelopment(500, clock);
            assertEquals(1, log.lines().size(), log.lines().toString());
            assertTrue(log.lines().get(0).startsWith("ONCE0002W: The in-memory claim store is in use (max 500 entries)"),
                    log.lines().toString());
        }
    }

    /** Answering BUSY (a read of the entry) leaves the holder's lease as it was, neither shortened nor ended. */
    @Test
    void aBusyAnswerLeavesTheHoldersLeaseAsItWas() {
        ClaimStore s = store;
        assertEquals(ClaimState.ACQUIRED, s.claim("mem:k", "holder", "", Duration.ofSeconds(30)).state());
        clock.advance(Duration.ofSeconds(10));
        assertEquals(ClaimState.IN_PROGRESS, s.claim("mem:k", "copy", "", Duration.ofSeconds(30)).state());
        assertEquals(20_000, pttl("mem:k"));
        clock.advance(Duration.ofSeconds(19));
        assertEquals(ClaimState.IN_PROGRESS, s.claim("mem:k", "copy", "", Duration.ofSeconds(30)).state());
    }
}
