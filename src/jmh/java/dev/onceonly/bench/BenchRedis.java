package dev.onceonly.bench;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;

/**
 * The Redis the benchmarks talk to: a private, pinned {@code redis-server} that
 * {@code bench/run-jmh.sh} starts and names in {@code ONCEONLY_BENCH_REDIS} ({@code host:port}).
 * An environment variable rather than a system property, because JMH's forked JVMs inherit it.
 * The benchmarks flush it: never point it at a Redis that holds anything of value.
 */
final class BenchRedis {

    static final String ENV = "ONCEONLY_BENCH_REDIS";

    private BenchRedis() {
    }

    static HostAndPort address() {
        String value = System.getenv(ENV);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(ENV + " is not set: run the benchmarks with bench/run-jmh.sh, "
                    + "which starts a private redis-server and sets it");
        }
        return HostAndPort.from(value);
    }

    /** Empties the benchmark's Redis (and only it: see the class comment). */
    static void flush() {
        try (RedisClient client = client()) {
            client.flushAll();
        }
    }

    /** A pooled client, the same kind {@code RedisClaimStore} uses in production. */
    static RedisClient client() {
        return RedisClient.create(address());
    }
}
