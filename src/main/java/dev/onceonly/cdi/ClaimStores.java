package dev.onceonly.cdi;

import dev.onceonly.config.OnceOnlyConfig;
import dev.onceonly.memory.InMemoryClaimStore;
import dev.onceonly.redis.RedisClaimStore;
import dev.onceonly.spi.ClaimStore;

import java.time.Clock;

/** Opens the claim store {@code onceonly.store} names. */
final class ClaimStores {

    private ClaimStores() {
    }

    static ClaimStore open(OnceOnlyConfig.Global global, Clock clock) {
        return switch (global.store()) {
            case "memory" -> InMemoryClaimStore.forDevelopment(global.memoryMaxEntries(), clock);
            case "redis" -> RedisClaimStore.connect(global.redis());
            default -> throw new IllegalStateException("onceonly.store was validated: " + global.store());
        };
    }
}
