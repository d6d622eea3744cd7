package dev.onceonly.bench;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * OnceOnly's claim beside what users would pick instead ({@link Peer}), with the floor
 * ({@link Peer#FLOOR}, a bare {@code SET NX PX}) measured in the same sweep, right before them: a
 * fresh key (the message is new) and a duplicate key (it was processed before). Same Redis, same
 * key shape, same sampling as {@link RedisRoundTripBenchmark}; one client thread.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PeersBenchmark {

    /** One peer's client for the whole trial. */
    @State(Scope.Benchmark)
    public static class Subject {
        @Param({"FLOOR", "ONCEONLY", "ONCEONLY_SCRIPT", "SPRING_INTEGRATION_JEDIS", "SPRING_INTEGRATION_LETTUCE", "CAMEL_JEDIS", "SETNX_EXPIRE"})
        public Peer peer;
        Peer.Client client;

        @Setup(Level.Trial)
        public void open() {
            client = peer.open(BenchRedis.address());
        }

        @TearDown(Level.Trial)
        public void close() {
            client.close();
        }
    }

    /** Keys never used before; Redis flushed before each iteration (see {@link RedisRoundTripBenchmark.FreshKeys}). */
    @State(Scope.Thread)
    public static class FreshKeys {
        final RedisRoundTripBenchmark.KeySource keys = new RedisRoundTripBenchmark.KeySource(ThreadLocalRandom.current().nextLong());

        @Setup(Level.Iteration)
        public void flush() {
            BenchRedis.flush();
        }
    }

    /** {@value #COUNT} keys processed once through the peer; the benchmark asks for them again, round robin. */
    @State(Scope.Thread)
    public static class ProcessedKeys {
        static final int COUNT = 1 << 14;
        final RedisRoundTripBenchmark.KeySource keys = new RedisRoundTripBenchmark.KeySource(ThreadLocalRandom.current().nextLong());
        private int next;

        @Setup(Level.Trial)
        public void process(Subject subject) {
            BenchRedis.flush();
            for (int i = 0; i < COUNT; i++) {
                subject.client.processed(keys.nth(i));
            }
        }

        String next() {
            return keys.nth(next++ & (COUNT - 1));
        }
    }

    /** A new message: the key is recorded and the answer is "new". */
    @Benchmark
    public boolean freshKey(Subject subject, FreshKeys keys) {
        return subject.client.firstTime(keys.keys.next());
    }

    /** A message processed before: the answer is "seen". */
    @Benchmark
    public boolean duplicateKey(Subject subject, ProcessedKeys keys) {
        return subject.client.firstTime(keys.next());
    }
}
