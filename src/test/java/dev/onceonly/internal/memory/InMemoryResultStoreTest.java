package dev.onceonly.internal.memory;

import dev.onceonly.contract.ResultStoreContract;
import dev.onceonly.testing.MutableClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The result store contract on the in-memory store, with a clock the test moves. */
class InMemoryResultStoreTest extends ResultStoreContract<InMemoryResultStore> {

    private final MutableClock clock = new MutableClock();

    @Override
    protected InMemoryResultStore newStore() {
        return new InMemoryResultStore(1_000, clock);
    }

    @Override
    protected void elapse(Duration d) {
        clock.advance(d);
    }

    @Override
    protected void call(String key, boolean commit, Runnable puts) {
        puts.run();
    }

    /** Bounded like the claim store: beyond its entries, the least recently used results go. */
    @Test
    void itKeepsAtMostItsEntries() {
        InMemoryResultStore small = new InMemoryResultStore(10, clock);
        for (int i = 0; i < 1_000; i++) {
            small.put("oo:c:" + i, "\"" + i + "\"", Duration.ofHours(1));
        }
        long kept = java.util.stream.IntStream.range(0, 1_000).filter(i -> small.get("oo:c:" + i).isPresent()).count();
        assertEquals(true, kept <= 10, kept + " kept");
        assertEquals(Optional.of("\"999\""), small.get("oo:c:999"), "the last one stays");
    }
}
