package dev.onceonly.internal.memory;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.testing.InMemoryBatchesContract;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The batch contract on the loop every store without batches of its own is given
 * ({@link BatchClaimStore#looping}), over the in-memory store.
 */
class LoopingBatchesTest extends InMemoryBatchesContract<BatchClaimStore> {

    @Override
    protected BatchClaimStore over(InMemoryClaimStore memory) {
        return BatchClaimStore.looping(memory);
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
