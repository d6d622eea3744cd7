package dev.onceonly.internal.redis;

import dev.onceonly.contract.ResultStoreContract;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The result store contract on this machine's Redis, through the claim store's connection; time passes for real. */
class RedisResultStoreTest extends ResultStoreContract<RedisResultStore> {

    private static RedisClient admin;
    private RedisClaimStore claims;

    @BeforeAll
    static void connect() {
        admin = TestRedis.client();
    }

    @AfterAll
    static void disconnect() {
        admin.close();
    }

    @Override
    protected RedisResultStore newStore() {
        claims = new RedisClaimStore(TestRedis.client());
        return (RedisResultStore) claims.results();
    }

    @AfterEach
    void closeStore() {
        claims.close();
    }

    @Override
    protected void elapse(Duration d) throws InterruptedException {
        Thread.sleep(d.toMillis());
    }

    @Override
    protected void call(String key, boolean commit, Runnable puts) {
        puts.run();
    }

    /** A result is a string of its own beside its claim, with its retention as TTL. */
    @Test
    void aResultIsAKeyBesideItsClaimWithItsRetention() {
        String key = key();
        store.put(key, "\"r\"", Duration.ofMinutes(5));
        String name = "{" + key + "}" + RedisResultStore.SUFFIX;
        assertEquals("\"r\"", admin.get(name));
        long ttl = admin.pttl(name);
        assertTrue(ttl > Duration.ofMinutes(4).toMillis() && ttl <= Duration.ofMinutes(5).toMillis(), "PTTL " + ttl);
        admin.del(name);
    }

    /**
     * In a cluster a result lives in its claim's hash slot, the claim key being its hash tag (a
     * claim key has no {@code {}: the key prefix may not hold one); a prefix holding a {@code }}
     * would end that tag early, and such a key's result is simply named after it.
     */
    @Test
    void aResultIsInItsClaimsHashSlot() {
        for (String claim : new String[] {"oo:payments:AbCdEfGhIjKlMnOpQrStUv", "billing:orders.v2:x-_Y", "oo:c:a"}) {
            String result = RedisResultStore.resultKey(claim);
            assertEquals("{" + claim + "}:result", result);
            assertEquals(JedisClusterCRC16.getSlot(claim), JedisClusterCRC16.getSlot(result), claim + " and " + result);
        }
        assertEquals("oo}:c:a:result", RedisResultStore.resultKey("oo}:c:a"));
    }
}
