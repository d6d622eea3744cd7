package dev.onceonly.redis;

import dev.onceonly.spi.ClaimStore;
import dev.onceonly.testing.TestRedis;

/**
 * The store contract with every claim sent as the Lua script ({@code onceonly.redis.native-claim=off}),
 * the path servers before Redis 7.0 get: both ways must keep the whole contract.
 */
class RedisClaimStoreScriptTest extends RedisClaimStoreTest {

    @Override
    protected ClaimStore newStore() {
        return new RedisClaimStore(TestRedis.client(), RedisSettings.NativeClaim.OFF);
    }
}
