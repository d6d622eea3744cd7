package dev.onceonly.testing;

import dev.onceonly.contract.BatchClaimStoreContract;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.BatchClaimStore;

import java.time.Duration;

/**
 * The batch contract on a batch store over the in-memory store (the loop, a decorator), with a
 * clock the test moves: subclasses say only how the batch store is made of the memory store.
 *
 * @param <S> the batch store's type
 */
public abstract class InMemoryBatchesContract<S extends BatchClaimStore> extends BatchClaimStoreContract<S> {

    private final MutableClock clock = new MutableClock();
    /** The store under the batch store of the current test. */
    protected InMemoryClaimStore memory;

    /**
     * @param memory a fresh in-memory store
     * @return the batch store under test, over {@code memory}
     */
    protected abstract S over(InMemoryClaimStore memory);

    @Override
    protected final S newStore() {
        memory = new InMemoryClaimStore(100_000, clock);
        return over(memory);
    }

    @Override
    protected final void elapse(Duration d) {
        clock.advance(d);
    }

    @Override
    protected final long pttl(String key) {
        return MemoryTtl.pttl(memory, key);
    }

    @Override
    protected final String newPrefix() {
        return "batches:";
    }
}
