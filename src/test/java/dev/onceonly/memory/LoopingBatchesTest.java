package dev.onceonly.memory;

import dev.onceonly.contract.BatchClaimStoreContract;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.testing.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The batch contract on the loop every store without batches of its own is given
 * ({@link BatchClaimStore#looping}), over the in-memory store with a clock the test moves.
 */
class LoopingBatchesTest extends BatchClaimStoreContract<BatchClaimStore> {

    private final MutableClock clock = new MutableClock();
    private InMemoryClaimStore memory;

    @Override
    protected BatchClaimStore newStore() {
        memory = new InMemoryClaimStore(100_000, clock);
        return BatchClaimStore.looping(memory);
    }

    @Override
    protected void elapse(Duration d) {
        clock.advance(d);
    }

    @Override
    protected long pttl(String key) {
        return InMemoryClaimStoreTest.pttl(memory, key);
    }

    @Override
    protected String newPrefix() {
        return "loop:";
    }

    /**
     * Only a store in this JVM lets completions ride with claims: elsewhere each completion of the
     * loop is a round trip of its own, which the claims would wait for.
     */
    @Test
    void onlyTheLoopInProcessCompletesWithClaims() {
        assertFalse(store.completesWithClaims());
        assertTrue(BatchClaimStore.inProcess(memory).completesWithClaims());
        assertSame(store, BatchClaimStore.of(store), "a store with batches is its own");
    }
}
