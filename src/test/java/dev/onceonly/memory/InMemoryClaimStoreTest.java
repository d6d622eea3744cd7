package dev.onceonly.memory;

import dev.onceonly.contract.ClaimStoreContract;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.testing.MutableClock;

import java.lang.reflect.Field;
import java.time.Duration;

/** The store contract on the in-memory store, with a clock the test moves (no sleeping). */
class InMemoryClaimStoreTest extends ClaimStoreContract {

    private final MutableClock clock = new MutableClock();

    @Override
    protected ClaimStore newStore() {
        return new InMemoryClaimStore(100_000, clock);
    }

    @Override
    protected void elapse(Duration d) {
        clock.advance(d);
    }

    @Override
    protected long pttl(String key) {
        try {
            Field cacheField = InMemoryClaimStore.class.getDeclaredField("cache");
            cacheField.setAccessible(true);
            @SuppressWarnings("unchecked")
            var cache = (com.github.benmanes.caffeine.cache.Cache<String, Object>) cacheField.get(store);
            return cache.policy().expireVariably().orElseThrow()
                    .getExpiresAfter(key).map(Duration::toMillis).orElse(-2L);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected String newPrefix() {
        return "mem:";
    }
}
