package dev.onceonly.testing;

import dev.onceonly.internal.memory.InMemoryClaimStore;

import java.lang.reflect.Field;
import java.time.Duration;

/** Reads a key's remaining time to live in the in-memory store, which offers no such call: for contract suites. */
public final class MemoryTtl {

    private MemoryTtl() {
    }

    /**
     * @param store the store
     * @param key   the key
     * @return the remaining time to live of {@code key} in milliseconds; -2 when absent
     */
    public static long pttl(InMemoryClaimStore store, String key) {
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
}
