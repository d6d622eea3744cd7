package dev.onceonly.bench;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.engine.MessageKey;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.testing.Settings;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Redis memory per retained (DONE) claim: {@code used_memory} growth over {@value #KEYS} keys,
 * divided by {@value #KEYS}, beside the same figure for a bare 36-character key with a TTL, in the
 * same Redis, one after the other. Not a JMH benchmark: memory is a count, not a timing.
 *
 * <p>Two floors, both a 36-character name with a TTL: with a one-character value ({@code "v"}; the
 * floor the targets are given against) and with the value {@code "1"}, which Redis keeps as a
 * shared integer object and so is the cheapest key it can hold at all. The claims are written
 * through {@link RedisClaimStore} (claim, then complete) with keys from {@link KeyDeriver}, so what
 * is measured is exactly what production retains for 24 hours.
 */
final class RedisMemoryPerKey {

    static final int KEYS = 100_000;
    private static final long RETENTION_MILLIS = RedisRoundTripBenchmark.RETENTION.toMillis();

    /** One measured key kind. */
    record Figure(String what, int keyLength, String sampleValue, double bytesPerKey, long memoryUsage) {
    }

    private final RedisClient client;
    private final RedisClaimStore store;

    RedisMemoryPerKey(RedisClient client) {
        this.client = client;
        this.store = new RedisClaimStore(client);
    }

    /** The floors first, then DONE claims with the default (content) key, then with a message-id key. */
    Figure[] measure() {
        return new Figure[] {
                bareKeys("v"),
                bareKeys("1"),
                doneClaims("DONE claim, default key (content)", KeyStrategy.CONTENT),
                doneClaims("DONE claim, message-id key", KeyStrategy.MESSAGE_ID),
        };
    }

    /**
     * {@value #KEYS} messages processed through {@code peer} (for OnceOnly claimed and completed):
     * {@code used_memory} growth per message. Some peers keep one key per message, Spring
     * Integration one hash field in a single key; so per message, not per key.
     */
    double bytesPerMessage(Peer peer) {
        long before = emptyUsedMemory();
        RedisRoundTripBenchmark.KeySource keys = new RedisRoundTripBenchmark.KeySource(peer.ordinal());
        try (Peer.Client c = peer.open(BenchRedis.address())) {
            for (int i = 0; i < KEYS; i++) {
                c.processed(keys.next());
            }
        }
        return (usedMemory() - before) / (double) KEYS;
    }

    private Figure bareKeys(String value) {
        SetParams ttl = SetParams.setParams().px(RETENTION_MILLIS);
        long before = emptyUsedMemory();
        try (AbstractPipeline p = client.pipelined()) {
            for (int i = 0; i < KEYS; i++) {
                p.set(bareKey(i), value, ttl);
            }
        }
        return figure("bare 36-char key + TTL", bareKey(0), before);
    }

    /** 36 characters, distinct per i: a name of a typical length such as a UUID. */
    private static String bareKey(int i) {
        return String.format("bench:%030d", i);
    }

    private Figure doneClaims(String what, KeyStrategy strategy) {
        KeyDeriver deriver = new KeyDeriver("oo:");
        ConsumerSettings settings = Settings.defaults(GuardFixture.CONSUMER, strategy);
        long before = emptyUsedMemory();
        String first = null;
        for (int i = 0; i < KEYS; i++) {
            byte[] body = ("{\"orderId\":" + i + ",\"amount\":10}").getBytes(StandardCharsets.UTF_8);
            MessageView message = MessageView.of("orders", "order.placed", "order-" + i, Map.of(), body);
            MessageKey key = deriver.derive(settings, message, null);
            String token = RedisRoundTripBenchmark.TOKEN;
            if (store.claim(key.storeKey(), token, key.fingerprint(), RedisRoundTripBenchmark.LEASE).state() != ClaimState.ACQUIRED
                    || store.complete(key.storeKey(), token, key.fingerprint(), RedisRoundTripBenchmark.RETENTION)
                    != HolderResult.APPLIED) {
                throw new IllegalStateException("could not complete claim " + key.storeKey());
            }
            if (first == null) {
                first = key.storeKey();
            }
        }
        return figure(what, first, before);
    }

    private Figure figure(String what, String sampleKey, long before) {
        if (client.dbSize() != KEYS) {
            throw new IllegalStateException("expected " + KEYS + " keys, found " + client.dbSize());
        }
        double perKey = (usedMemory() - before) / (double) KEYS;
        return new Figure(what, sampleKey.length(), client.get(sampleKey), perKey, client.memoryUsage(sampleKey));
    }

    private long emptyUsedMemory() {
        client.flushAll();
        return usedMemory();
    }

    private long usedMemory() {
        for (String line : client.info("memory").split("\r\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()));
            }
        }
        throw new IllegalStateException("INFO memory has no used_memory");
    }
}
