package dev.onceonly.bench;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.engine.MessageKey;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.BatchClaimStore.ClaimRequest;
import dev.onceonly.spi.BatchClaimStore.CompleteRequest;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.testing.Args;
import dev.onceonly.testing.Settings;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import org.HdrHistogram.Histogram;
import redis.clients.jedis.RedisClient;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The Redis claim store with many retained keys (see {@code bench/run-ledger-scale.sh}), against the
 * private Redis named by {@code ONCEONLY_BENCH_REDIS} ({@link BenchRedis}; it is flushed).
 * <ol>
 *   <li>{@code --keys} (1,000,000) DONE claims written through {@link RedisClaimStore#claimAll} and
 *       {@link RedisClaimStore#completeAll} in batches of {@value #BATCH} (the done writer's largest),
 *       keys and fingerprints from {@link KeyDeriver} with the default (content) key, retention 24 h:
 *       {@code used_memory} growth per key, {@code used_memory_rss}, and the keyspace's key and
 *       {@code expires} counts;</li>
 *   <li>on an empty Redis and again with those keys retained, the same single-key path
 *       production takes per message: {@code --messages} (10,000) fresh messages ({@code claim}, then
 *       {@code complete}) and as many duplicates ({@code claim} of a key just completed): the
 *       latency of each call (p50, p99) and the commands Redis ran per message, from
 *       {@code INFO commandstats} deltas. Commandstats also count the commands a script runs, so a
 *       script's {@code EVALSHA} comes with the {@code GET}/{@code SET} inside it.</li>
 * </ol>
 * Prints a table and writes {@code target/bench/redis-scale.json}.
 */
public final class RedisScale {

    /** The done writer's batch bound ({@code DoneWriter.MAX_BATCH}): what production sends in one round trip. */
    private static final int BATCH = 128;
    private static final Duration LEASE = ConsumerSettings.DEFAULT_LEASE;
    private static final Duration RETENTION = ConsumerSettings.DEFAULT_RETENTION;
    private static final String TOKEN = RedisRoundTripBenchmark.TOKEN;

    /** Latency of one call, and the commands per message, of one stretch of messages. */
    private record Phase(Histogram claim, Histogram complete, Histogram duplicate, Map<String, Double> freshCommands,
                         Map<String, Double> duplicateCommands) {
        JsonObject json() {
            return Json.createObjectBuilder()
                    .add("claimMicros", micros(claim)).add("completeMicros", micros(complete)).add("duplicateClaimMicros", micros(duplicate))
                    .add("commandsPerFreshMessage", counts(freshCommands)).add("commandsPerDuplicate", counts(duplicateCommands))
                    .build();
        }
    }

    private final RedisClient info;
    private final RedisClaimStore store;
    private final KeyDeriver deriver = new KeyDeriver("oo:");
    private final ConsumerSettings settings = Settings.defaults(GuardFixture.CONSUMER, KeyStrategy.CONTENT);
    private final int messages;

    private RedisScale(RedisClient info, RedisClaimStore store, int messages) {
        this.info = info;
        this.store = store;
        this.messages = messages;
    }

    public static void main(String[] args) throws Exception {
        Args opts = Args.parse(args, "--keys --messages");
        int keys = opts.integer("keys", 1_000_000);
        int messages = opts.integer("messages", 10_000);
        try (RedisClient info = BenchRedis.client(); RedisClaimStore store = new RedisClaimStore(BenchRedis.client())) {
            try {
                info.ping();
            } catch (RuntimeException e) {
                throw new IllegalStateException("Redis does not answer at " + BenchRedis.address() + ": " + e.getMessage(), e);
            }
            new RedisScale(info, store, messages).run(keys);
        }
    }

    private void run(int keys) throws Exception {
        System.out.printf(Locale.ROOT, "%n# Redis %s at %s: %,d retained keys, %,d messages per phase%n",
                section("server").get("redis_version"), BenchRedis.address(), keys, messages);
        // The first phase must not pay the JIT's warm-up and the pool's first connections.
        BenchRedis.flush();
        phase("warm-up");
        BenchRedis.flush();
        Phase empty = phase("empty");

        BenchRedis.flush();
        long emptyMemory = Long.parseLong(section("memory").get("used_memory"));
        long start = System.nanoTime();
        fill(keys);
        double fillSeconds = (System.nanoTime() - start) / 1e9;
        Map<String, String> memory = section("memory");
        Map<String, String> keyspace = keyspace();
        long used = Long.parseLong(memory.get("used_memory"));
        long rss = Long.parseLong(memory.get("used_memory_rss"));
        double perKey = (used - emptyMemory) / (double) keys;
        String sample = key("fill", 0).storeKey();
        Long sampleUsage = info.memoryUsage(sample);
        System.out.printf(Locale.ROOT, "filled %,d DONE claims in %.1f s (%,.0f keys/s); keyspace %s%n", keys, fillSeconds,
                keys / fillSeconds, keyspace);
        // RSS is the whole process's and never shrinks after a flush: given as is, not per key.
        System.out.printf(Locale.ROOT, "used_memory %,d (%.1f bytes/key over the empty Redis), used_memory_rss %,d"
                + " (mem_fragmentation_ratio %s), MEMORY USAGE of %s: %d%n", used, perKey, rss, memory.get("mem_fragmentation_ratio"),
                sample, sampleUsage);
        Phase full = phase(String.format(Locale.ROOT, "%,d keys", keys));

        System.out.printf(Locale.ROOT, "%n## Redis at scale%n%n| | empty Redis | %,d keys |%n|---|---|---|%n", keys);
        row("claim p50 / p99 us (fresh)", percentiles(empty.claim()), percentiles(full.claim()));
        row("complete p50 / p99 us", percentiles(empty.complete()), percentiles(full.complete()));
        row("claim p50 / p99 us (duplicate)", percentiles(empty.duplicate()), percentiles(full.duplicate()));
        row("commands per fresh message", commands(empty.freshCommands()), commands(full.freshCommands()));
        row("commands per duplicate", commands(empty.duplicateCommands()), commands(full.duplicateCommands()));
        row("used_memory per key (used_memory_rss)", "",
                String.format(Locale.ROOT, "%.1f bytes (%.1f MiB)", perKey, rss / (1024.0 * 1024.0)));
        row("keys / expires", "", keyspace.get("keys") + " / " + keyspace.get("expires"));

        JsonObjectBuilder space = Json.createObjectBuilder();
        keyspace.forEach(space::add);
        JsonObject result = Json.createObjectBuilder()
                .add("redisVersion", section("server").get("redis_version"))
                .add("keys", keys)
                .add("messagesPerPhase", messages)
                .add("fill", Json.createObjectBuilder().add("seconds", fillSeconds).add("keysPerSecond", keys / fillSeconds)
                        .add("batch", BATCH))
                .add("memory", Json.createObjectBuilder().add("emptyUsedMemory", emptyMemory).add("usedMemory", used)
                        .add("usedMemoryRss", rss).add("bytesPerKey", perKey)
                        .add("memFragmentationRatio", memory.get("mem_fragmentation_ratio"))
                        .add("sampleKeyMemoryUsage", sampleUsage == null ? -1 : sampleUsage))
                .add("keyspace", space)
                .add("empty", empty.json())
                .add("retained", full.json())
                .build();
        Path out = Path.of("target", "bench", "redis-scale.json");
        Files.createDirectories(out.getParent());
        Files.writeString(out, result + "\n");
    }

    /** {@code keys} DONE claims, as the guard and the done writer leave them: claimed, then completed, in batches. */
    private void fill(int keys) {
        for (int first = 0; first < keys; first += BATCH) {
            List<ClaimRequest> claims = new ArrayList<>(BATCH);
            List<CompleteRequest> completions = new ArrayList<>(BATCH);
            for (int i = first; i < Math.min(keys, first + BATCH); i++) {
                MessageKey key = key("fill", i);
                claims.add(new ClaimRequest(key.storeKey(), TOKEN, key.fingerprint(), LEASE));
                completions.add(new CompleteRequest(key.storeKey(), TOKEN, key.fingerprint(), RETENTION));
            }
            if (!store.claimAll(claims).stream().allMatch(r -> r.state() == ClaimState.ACQUIRED)
                    || !store.completeAll(completions).stream().allMatch(r -> r == HolderResult.APPLIED)) {
                throw new IllegalStateException("a fresh key of the fill was not claimed and completed (batch at " + first + ")");
            }
        }
    }

    /** {@link #messages} fresh messages, then each of them again as a duplicate, one call at a time. */
    private Phase phase(String name) {
        List<MessageKey> keys = new ArrayList<>(messages);
        for (int i = 0; i < messages; i++) {
            keys.add(key(name, i));
        }
        Histogram claim = histogram();
        Histogram complete = histogram();
        Histogram duplicate = histogram();
        Map<String, Long> before = commandCalls();
        for (MessageKey key : keys) {
            long start = System.nanoTime();
            ClaimResult claimed = store.claim(key.storeKey(), TOKEN, key.fingerprint(), LEASE);
            long claimedAt = System.nanoTime();
            HolderResult completed = store.complete(key.storeKey(), TOKEN, key.fingerprint(), RETENTION);
            long end = System.nanoTime();
            if (claimed.state() != ClaimState.ACQUIRED || completed != HolderResult.APPLIED) {
                throw new IllegalStateException("fresh message " + key.storeKey() + ": " + claimed + ", " + completed);
            }
            claim.recordValue(claimedAt - start);
            complete.recordValue(end - claimedAt);
        }
        Map<String, Long> afterFresh = commandCalls();
        for (MessageKey key : keys) {
            long start = System.nanoTime();
            ClaimResult claimed = store.claim(key.storeKey(), TOKEN, key.fingerprint(), LEASE);
            long end = System.nanoTime();
            if (claimed.state() != ClaimState.DONE) {
                throw new IllegalStateException("duplicate " + key.storeKey() + ": " + claimed);
            }
            duplicate.recordValue(end - start);
        }
        Phase phase = new Phase(claim, complete, duplicate, perMessage(before, afterFresh), perMessage(afterFresh, commandCalls()));
        System.out.printf(Locale.ROOT, "%s: claim %s, complete %s, duplicate claim %s (p50 / p99 us); commands per fresh message %s,"
                        + " per duplicate %s%n", name, percentiles(claim), percentiles(complete), percentiles(duplicate),
                commands(phase.freshCommands()), commands(phase.duplicateCommands()));
        return phase;
    }

    /** The {@code n}-th message of {@code phase}, keyed as production keys it: a body, hashed by {@link KeyDeriver}. */
    private MessageKey key(String phase, int n) {
        byte[] body = ("{\"orderId\":" + n + ",\"amount\":10,\"phase\":\"" + phase + "\"}").getBytes(StandardCharsets.UTF_8);
        return deriver.derive(settings, MessageView.of("orders", "order.placed", phase + "-" + n, Map.of(), body), null);
    }

    /** Calls per command so far, from {@code INFO commandstats}, without this tool's own {@code INFO}. */
    private Map<String, Long> commandCalls() {
        Map<String, Long> calls = new TreeMap<>();
        section("commandstats").forEach((name, stats) -> {
            String command = name.substring("cmdstat_".length());
            if (!command.equals("info")) {
                calls.put(command, Long.parseLong(stats.substring("calls=".length(), stats.indexOf(','))));
            }
        });
        return calls;
    }

    private Map<String, Double> perMessage(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Double> perMessage = new TreeMap<>();
        after.forEach((command, calls) -> {
            long delta = calls - before.getOrDefault(command, 0L);
            if (delta > 0) {
                perMessage.put(command, delta / (double) messages);
            }
        });
        return perMessage;
    }

    /** {@code INFO <section>} as name → value. */
    private Map<String, String> section(String section) {
        Map<String, String> values = new TreeMap<>();
        for (String line : info.info(section).split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                values.put(line.substring(0, colon), line.substring(colon + 1));
            }
        }
        return values;
    }

    /** {@code db0} of {@code INFO keyspace}: keys, expires, avg_ttl. */
    private Map<String, String> keyspace() {
        Map<String, String> values = new TreeMap<>();
        String db0 = section("keyspace").get("db0");
        if (db0 == null) {
            throw new IllegalStateException("INFO keyspace has no db0: the fill wrote nothing");
        }
        for (String pair : db0.split(",")) {
            values.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
        }
        return values;
    }

    private static Histogram histogram() {
        return new Histogram(TimeUnit.MINUTES.toNanos(1), 3);
    }

    private static String percentiles(Histogram h) {
        return String.format(Locale.ROOT, "%.1f / %.1f", h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0);
    }

    private static String commands(Map<String, Double> perMessage) {
        StringBuilder b = new StringBuilder();
        perMessage.forEach((command, n) -> b.append(b.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %.2f", command, n)));
        return b.length() == 0 ? "none" : b.toString();
    }

    private static JsonObject micros(Histogram h) {
        return Json.createObjectBuilder().add("p50", h.getValueAtPercentile(50) / 1000.0).add("p90", h.getValueAtPercentile(90) / 1000.0)
                .add("p99", h.getValueAtPercentile(99) / 1000.0).add("max", h.getMaxValue() / 1000.0).build();
    }

    private static JsonObject counts(Map<String, Double> perMessage) {
        JsonObjectBuilder b = Json.createObjectBuilder();
        perMessage.forEach(b::add);
        return b.build();
    }

    private static void row(String what, String empty, String full) {
        System.out.printf("| %s | %s | %s |%n", what, empty, full);
    }
}
