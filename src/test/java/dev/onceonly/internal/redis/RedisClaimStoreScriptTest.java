package dev.onceonly.internal.redis;

import dev.onceonly.testing.TestRedis;

/**
 * The store contract with every claim sent as the Lua script ({@code onceonly.redis.native-claim=off}),
 * the path servers before Redis 7.0 get: both ways must keep the whole contract.
 */
class RedisClaimStoreScriptTest extends RedisClaimStoreTest {

    /** The claim script gives fences. */
    @Override
    protected boolean givesFences() {
        return true;
    }

    @Override
    protected RedisClaimStore newStore() {
        return new RedisClaimStore(TestRedis.client(), RedisSettings.NativeClaim.OFF);
    }
}
