package dev.onceonly.internal.engine;

import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.testing.DrainedScheduler;
import dev.onceonly.testing.InMemoryBatchesContract;

/**
 * The batch contract on the {@link DoneWriter}, the decorator the engine claims through: with no
 * done mark queued it answers exactly as the store it decorates (here the in-memory store's loop,
 * which lets marks ride with claims), batches and primitives alike.
 */
class DoneWriterBatchContractTest extends InMemoryBatchesContract<DoneWriter> {

    @Override
    protected DoneWriter over(InMemoryClaimStore memory) {
        return new DoneWriter(BatchClaimStore.inProcess(memory), new DrainedScheduler());
    }
}
