package dev.onceonly.internal.redis;

import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.PrivateRedis;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Startup checks against a real Redis of the test's own (its eviction policy is changed). */
class RedisStartupChecksTest {

    private static RedisSettings settings(PrivateRedis redis) {
        return new RedisSettings(RedisSettings.Mode.STANDALONE, List.of("127.0.0.1:" + redis.port()), "", false, null, null, 0,
                Duration.ofSeconds(2), Duration.ofSeconds(2), 2);
    }

    @Test
    void evictingMaxmemoryPolicyIsWarnedAboutAndNoevictionIsNot() throws Exception {
        try (PrivateRedis redis = new PrivateRedis(); RedisClient admin = redis.client()) {
            admin.configSet("maxmemory-policy", "allkeys-lru");
            try (LogCapture log = new LogCapture(); RedisClaimStore store = RedisClaimStore.connect(settings(redis))) {
                assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("ONCE0003W") && l.contains("allkeys-lru")), log.lines().toString());
                assertTrue(log.contains("ONCE0006I"), log.lines().toString());
            }
            // Every claim has a TTL: volatile-* policies evict claims as well.
            admin.configSet("maxmemory-policy", "volatile-lru");
            try (LogCapture log = new LogCapture(); RedisClaimStore store = RedisClaimStore.connect(settings(redis))) {
                assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("ONCE0003W") && l.contains("volatile-lru")), log.lines().toString());
            }
            admin.configSet("maxmemory-policy", "noeviction");
            try (LogCapture log = new LogCapture(); RedisClaimStore store = RedisClaimStore.connect(settings(redis))) {
                assertFalse(log.contains("ONCE0003W"), log.lines().toString());
            }
        }
    }
}
