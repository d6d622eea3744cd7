package dev.onceonly.internal.redis;

import dev.onceonly.contract.BatchClaimStoreContract;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.time.Duration;

/**
 * The store contract, batches included (pipelined), on the real Redis of this machine. Fails (never
 * skips) when Redis is down.
 */
class RedisClaimStoreTest extends BatchClaimStoreContract<RedisClaimStore> {

    private static redis.clients.jedis.RedisClient admin;

    @BeforeAll
    static void connect() {
        admin = TestRedis.client();
        admin.ping();
    }

    @AfterAll
    static void disconnect() {
        admin.close();
    }

    @Override
    protected RedisClaimStore newStore() {
        return new RedisClaimStore(TestRedis.client());
    }

    /** The native claim ({@code SET NX PX GET}) cannot read Redis's clock: no fences. */
    @Override
    protected boolean givesFences() {
        return false;
    }

    @Override
    protected void elapse(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    @Override
    protected long pttl(String key) {
        return admin.pttl(key);
    }

    @Override
    protected String newPrefix() {
        return TestRedis.uniquePrefix("contract");
    }
}
