package dev.onceonly.testing;

import redis.clients.jedis.RedisClient;

import java.net.URI;

/** The real Redis the tests use (this machine's, unless -Donceonly.test.redis.url says otherwise). Tests FAIL when it is down. */
public final class TestRedis {

    private TestRedis() {
    }

    public static String url() {
        return System.getProperty("onceonly.test.redis.url", "redis://127.0.0.1:6379");
    }

    public static RedisClient client() {
        return RedisClient.create(URI.create(url()));
    }

    /** A key prefix no other test run shares. */
    public static String uniquePrefix(String test) {
        return "oo-test:" + test + ":" + Long.toString(System.nanoTime(), 36) + ":";
    }
}
