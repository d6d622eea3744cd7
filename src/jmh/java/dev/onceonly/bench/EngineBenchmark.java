package dev.onceonly.bench;

import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.HolderResult;
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

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The engine's own CPU cost per fresh message, with no network: key derivation (SHA-256 of the
 * body, the content key, SHA-256 of that, base64url), the fencing token, claim and complete, the
 * claim handed to the lease renewal sweep and taken back, and the outcome logic. The handler does
 * nothing. With {@code -prof gc} this is also the guard's allocation per message.
 *
 * <p>Two stores, to tell the engine from its store: {@code memory} is the in-memory store at the
 * default bound (100,000 entries; past it every insert also evicts, which is where a benchmark of
 * fresh messages keeps it), {@code none} answers every call at once and keeps nothing, so what is
 * left is the engine alone.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class EngineBenchmark {

    /** Body sizes: a typical JSON event, and a large one where hashing dominates. */
    @Param({"1024", "65536"})
    public int bodySize;

    @Param({"memory", "none"})
    public String store;

    private GuardFixture fixture;

    @Setup(Level.Trial)
    public void start() {
        ClaimStore claims = store.equals("memory") ? new InMemoryClaimStore(100_000, Clock.systemUTC()) : new NoStore();
        fixture = new GuardFixture(claims, bodySize);
    }

    @TearDown(Level.Trial)
    public void stop() {
        fixture.close();
    }

    /** One fresh message through {@code GuardEngine.guard}. */
    @Benchmark
    public Boolean guardFreshMessage() throws Exception {
        return fixture.guardNext();
    }

    /** A store that costs nothing: every claim is acquired, every holder call applied. */
    static final class NoStore implements ClaimStore {
        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            return ClaimResult.ACQUIRED;
        }

        @Override
        public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
            return HolderResult.APPLIED;
        }

        @Override
        public HolderResult release(String key, String token) {
            return HolderResult.APPLIED;
        }

        @Override
        public HolderResult extend(String key, String token, Duration lease) {
            return HolderResult.APPLIED;
        }

        @Override
        public String name() {
            return "none";
        }

        @Override
        public java.util.Optional<String> problem() {
            return java.util.Optional.empty();
        }

        @Override
        public void close() {
        }
    }
}
