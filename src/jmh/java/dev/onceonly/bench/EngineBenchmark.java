package dev.onceonly.bench;

import dev.onceonly.memory.InMemoryClaimStore;
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
import java.util.concurrent.TimeUnit;

/**
 * The engine's own CPU cost per fresh message, with no network: key derivation (SHA-256 of the
 * body, the content key, SHA-256 of that, base64url), the fencing token, claim and complete on the
 * in-memory store, the lease watchdog scheduled and cancelled, and the outcome logic. The handler
 * does nothing. Run with {@code -prof gc} this also gives the guard's allocation per message.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class EngineBenchmark {

    /** Body sizes: a typical JSON event, and a large one where hashing dominates. */
    @Param({"1024", "65536"})
    public int bodySize;

    private GuardFixture fixture;

    @Setup(Level.Trial)
    public void start() {
        // Bounded like the default (onceonly.memory.max-entries): past it, every insert also evicts.
        fixture = new GuardFixture(new InMemoryClaimStore(100_000, Clock.systemUTC()), bodySize);
    }

    @TearDown(Level.Trial)
    public void stop() {
        fixture.close();
    }

    /** One fresh message through {@code GuardEngine.guard} on the in-memory store. */
    @Benchmark
    public Boolean guardFreshMessage() throws Exception {
        return fixture.guardNext();
    }
}
