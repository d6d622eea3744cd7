package dev.onceonly.bench;

import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.BatchClaimStore.ClaimRequest;
import dev.onceonly.spi.BatchClaimStore.CompleteRequest;
import dev.onceonly.spi.HolderResult;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the Redis claim store costs against the physical floor: one bare {@code SET NX PX} round
 * trip through the same pooled Jedis client, to the same private pinned Redis, in the same run.
 * One client thread, no pipelining: the latency a single consumer sees per message.
 *
 * <p>Sampled per call ({@link Mode#SampleTime}); the figure of record is the median, because on a
 * shared machine a preempted call lands in the tail, not in the middle. Keys have the shape of the
 * default format ({@code oo:<consumer>:<22 base64url chars>}), and every benchmark pays the same
 * key generation, so the ratios isolate what the store adds: {@code EVALSHA} instead of a plain
 * command, the script's work in Redis, and the encoding and parsing around it.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RedisRoundTripBenchmark {

    static final Duration LEASE = Duration.ofSeconds(30);
    static final Duration RETENTION = Duration.ofHours(24);
    /** A fencing token as long as the engine's (21 characters): the claim value's length matters. */
    static final String TOKEN = "q3Ru8-ZcWb1xT0kLm_9aP";
    /** The floor writes a value as long as the claim's {@code P<token>|}, so only the script differs. */
    static final String FLOOR_VALUE = "P" + TOKEN + "|";
    static final SetParams NX_PX_LEASE = SetParams.setParams().nx().px(LEASE.toMillis());
    static final SetParams PX_RETENTION = SetParams.setParams().px(RETENTION.toMillis());
    /** A batch consumer's messages per call: the connector's default {@code batch-size}. */
    static final int BATCH = 32;

    /** One client and one store on it, for the whole trial. */
    @State(Scope.Benchmark)
    public static class Redis {
        RedisClient client;
        RedisClaimStore store;

        @Setup(Level.Trial)
        public void connect() {
            client = BenchRedis.client();
            store = new RedisClaimStore(client);
        }

        @TearDown(Level.Trial)
        public void close() {
            store.close();
        }
    }

    /**
     * Keys never used before. Redis is flushed before each iteration, so every iteration starts from
     * the same empty keyspace and nothing expires while it is measured (iterations are far shorter
     * than the 30 s lease).
     */
    @State(Scope.Thread)
    public static class FreshKeys {
        final KeySource keys = new KeySource(ThreadLocalRandom.current().nextLong());

        @Setup(Level.Iteration)
        public void flush(Redis redis) {
            redis.client.flushAll();
        }

        String next() {
            return keys.next();
        }
    }

    /** {@value #COUNT} keys claimed and completed once; the benchmark claims them again, round robin. */
    @State(Scope.Thread)
    public static class DoneKeys {
        static final int COUNT = 1 << 14;
        final KeySource keys = new KeySource(ThreadLocalRandom.current().nextLong());
        private int next;

        @Setup(Level.Trial)
        public void complete(Redis redis) {
            redis.client.flushAll();
            for (int i = 0; i < COUNT; i++) {
                String key = keys.nth(i);
                if (redis.store.claim(key, TOKEN, "", LEASE).state() != ClaimState.ACQUIRED
                        || redis.store.complete(key, TOKEN, "", RETENTION) != HolderResult.APPLIED) {
                    throw new IllegalStateException("could not prepare done key " + key);
                }
            }
        }

        String next() {
            return keys.nth(next++ & (COUNT - 1));
        }
    }

    /** How many fresh keys one {@code claimAll} call claims; the per-message cost is the call's over it. */
    @State(Scope.Thread)
    public static class ClaimBatch {
        @Param({"1", "4", "16"})
        public int batch;

        List<ClaimRequest> next(FreshKeys keys) {
            List<ClaimRequest> requests = new ArrayList<>(batch);
            for (int i = 0; i < batch; i++) {
                requests.add(new ClaimRequest(keys.next(), TOKEN, "", LEASE));
            }
            return requests;
        }
    }

    /**
     * {@code batch} fresh keys claimed before each {@code completeAll} call, in one claimAll (one
     * round trip, not measured), and the completions of them the call is given.
     */
    @State(Scope.Thread)
    public static class HeldBatch {
        @Param({"1", "4", "16"})
        public int batch;
        List<CompleteRequest> completions;

        @Setup(Level.Invocation)
        public void claim(Redis redis, FreshKeys keys) {
            List<ClaimRequest> claims = new ArrayList<>(batch);
            completions = new ArrayList<>(batch);
            for (int i = 0; i < batch; i++) {
                String key = keys.next();
                claims.add(new ClaimRequest(key, TOKEN, "", LEASE));
                completions.add(new CompleteRequest(key, TOKEN, "", RETENTION));
            }
            for (ClaimResult r : redis.store.claimAll(claims)) {
                if (r.state() != ClaimState.ACQUIRED) {
                    throw new IllegalStateException("a fresh key was not acquired: " + r);
                }
            }
        }
    }

    /** A guard engine on the Redis store, for the whole guarded message. */
    @State(Scope.Thread)
    public static class GuardOnRedis {
        GuardFixture fixture;

        @Setup(Level.Trial)
        public void start(Redis redis) {
            fixture = new GuardFixture(redis.store, 1024);
        }

        @Setup(Level.Iteration)
        public void flush(Redis redis) {
            redis.client.flushAll();
        }

        @TearDown(Level.Trial)
        public void stop() {
            fixture.close();
        }
    }

    /**
     * As {@link GuardOnRedis}, for a consumer with the ledger on (a stand-in answering INSERTED): the
     * done mark is written after the guard returned, off the benchmark's thread.
     */
    @State(Scope.Thread)
    public static class GuardOnRedisLedgerOn {
        GuardFixture fixture;

        @Setup(Level.Trial)
        public void start(Redis redis) {
            fixture = new GuardFixture(redis.store, 1024, true);
        }

        @Setup(Level.Iteration)
        public void flush(Redis redis) {
            redis.client.flushAll();
        }

        @TearDown(Level.Trial)
        public void stop() {
            fixture.close();
        }
    }

    /** Keys in the default format's shape: a fixed prefix and 16 bytes (run, counter) in base64url. */
    static final class KeySource {
        private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
        private final byte[] id = new byte[16];
        private long counter;

        KeySource(long run) {
            putLong(0, run);
        }

        String next() {
            return nth(counter++);
        }

        String nth(long n) {
            putLong(8, n);
            return "oo:" + GuardFixture.CONSUMER + ":" + B64.encodeToString(id);
        }

        private void putLong(int offset, long v) {
            for (int i = 0; i < 8; i++) {
                id[offset + i] = (byte) (v >>> (8 * i));
            }
        }
    }

    /** The floor: one bare {@code SET key value NX PX 30000} of a fresh key, one round trip. */
    @Benchmark
    public String floorSetNxPx(Redis redis, FreshKeys keys) {
        return redis.client.set(keys.next(), FLOOR_VALUE, NX_PX_LEASE);
    }

    /**
     * The floor of two round trips: {@code SET NX PX} then {@code SET PX} of the same fresh key, the
     * bare-command shape of claim + complete. Tells what two round trips in a row cost here, apart
     * from what the claim store adds to them.
     */
    @Benchmark
    public String floorTwoSets(Redis redis, FreshKeys keys) {
        String key = keys.next();
        redis.client.set(key, FLOOR_VALUE, NX_PX_LEASE);
        return redis.client.set(key, "D", PX_RETENTION);
    }

    /** Claim of a fresh message: one {@code EVALSHA} of the claim script that takes the key. */
    @Benchmark
    public ClaimResult claimFresh(Redis redis, FreshKeys keys) {
        return redis.store.claim(keys.next(), TOKEN, "", LEASE);
    }

    /**
     * Claims of {@code batch} fresh messages taken together (a consumer's buffered deliveries): one
     * {@code claimAll}, one pipelined round trip of native claims. Per message: the time over {@code batch}.
     */
    @Benchmark
    public List<ClaimResult> claimAllFresh(Redis redis, FreshKeys keys, ClaimBatch batch) {
        return redis.store.claimAll(batch.next(keys));
    }

    /**
     * Completions of {@code batch} held messages taken together: one {@code completeAll}, one
     * pipelined round trip of completion scripts. Per message: the time over {@code batch}.
     */
    @Benchmark
    public List<HolderResult> completeAllHeld(Redis redis, HeldBatch held) {
        return redis.store.completeAll(held.completions);
    }

    /** Claim then complete of a fresh message: the two round trips of a processed message. */
    @Benchmark
    public HolderResult claimAndComplete(Redis redis, FreshKeys keys) {
        String key = keys.next();
        redis.store.claim(key, TOKEN, "", LEASE);
        return redis.store.complete(key, TOKEN, "", RETENTION);
    }

    /** Claim of a message already done: the duplicate path, one round trip answering DONE. */
    @Benchmark
    public ClaimState claimDuplicate(Redis redis, DoneKeys keys) {
        return redis.store.claim(keys.next(), TOKEN, "", LEASE).state();
    }

    /**
     * A whole guarded message on Redis (1 KB body): key derivation, claim, lease renewal sweep, handler,
     * complete. The end-to-end cost of the guard per message, and its allocation with Jedis included.
     */
    @Benchmark
    public Boolean guardFreshMessage(GuardOnRedis guard) throws Exception {
        return guard.fixture.guardNext();
    }

    /**
     * A whole guarded message on Redis with the ledger on: what the consumer's thread waits for is
     * the claim alone; the done marks go out in batches on the engine's scheduler thread (which shares
     * the pinned CPU, so its work still shows in this figure).
     */
    @Benchmark
    public Boolean guardFreshMessageLedgerOn(GuardOnRedisLedgerOn guard) throws Exception {
        return guard.fixture.guardNext();
    }

    /**
     * A batch of {@value #BATCH} fresh 1 KB messages on Redis, the batch consumer's default size: keys
     * derived, claimed in one pipelined call, the handler once, then each message's done mark. Scored
     * per message ({@code OperationsPerInvocation}), beside {@link #guardFreshMessage}.
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int guardBatchOf32(GuardOnRedis guard) {
        return guard.fixture.guardBatch(BATCH);
    }

    /**
     * As {@link #guardBatchOf32} with the ledger on (a stand-in answering INSERTED): the done marks
     * queued, written after the call. Per message, beside {@link #guardFreshMessageLedgerOn}.
     */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int guardBatchOf32LedgerOn(GuardOnRedisLedgerOn guard) {
        return guard.fixture.guardBatch(BATCH);
    }
}
