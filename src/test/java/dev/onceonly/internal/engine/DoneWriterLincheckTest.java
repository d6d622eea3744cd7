package dev.onceonly.internal.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.DrainedScheduler;
import dev.onceonly.testing.Settings;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Model checks the done-mark queue ({@link DoneWriter}) under Lincheck: consumers' threads queue
 * completions while claims carry queued ones to the store, the drain runs on the executor's thread
 * and shutdown flushes, in every interleaving the checker explores.
 *
 * <p>Property: every queued completion is written exactly once, by one writer (a claim carrying it,
 * the drain or a flush), and none is left behind: once all calls returned and the executor ran what
 * it was given, each completion queued reached the store once ({@link CountingStore}), each call
 * was told (the engine counts no call in flight), and none reached it twice. The drain runs on a
 * {@link DrainedScheduler}, so the checker interleaves it with the others.
 *
 * <p>Random scenarios rarely make the race that strands a mark (a completion added between the
 * drain's last poll and the clearing of its flag, and nothing written after it): a drain without
 * its re-check loop passed 100 of them. That race is written out as a scenario of its own
 * ({@link #aMarkQueuedWhileTheDrainFinishesIsWrittenToo}), whose interleavings are all explored.
 *
 * <p>The calls are the engine's own ({@link HeldClaim} finalised by the {@link Finaliser}, with the ledger on) on an engine with a
 * store that only counts; the operations return nothing, the property is checked after each run
 * ({@link Validate}).
 */
public class DoneWriterLincheckTest {

    /** At most one completion per operation: two threads of two operations, with room to spare. */
    private static final int CALLS = 6;

    private final CountingStore store = new CountingStore();
    private final DrainedScheduler executor = new DrainedScheduler();
    private final GuardEngine engine = new GuardEngine(store, TransactionRunner.NONE, null, executor, e -> { },
            new KeyDeriver("oo:"));
    private final HeldClaim[] calls = new HeldClaim[CALLS];
    private final AtomicInteger added = new AtomicInteger();

    /** Calls committed, their done marks not yet queued. */
    public DoneWriterLincheckTest() {
        ConsumerSettings settings = Settings.withLedger(Settings.defaults("orders", KeyStrategy.CONTENT), true);
        for (int i = 0; i < CALLS; i++) {
            MessageKey key = new MessageKey("oo:orders:" + i, "digest-" + i, "fingerprint", new byte[0]);
            calls[i] = new HeldClaim(engine.holders, settings, key, "token-" + i, 0, 0);
            engine.finaliser.started();
        }
    }

    /** A consumer's thread: the next call's message was acked, its done mark is queued. */
    @Operation
    public void complete() {
        int i = added.getAndIncrement();
        if (i < CALLS) {
            engine.finaliser.complete(calls[i], true);
        }
    }

    /** A consumer's thread claims a message: the claim carries what is queued. */
    @Operation
    public void claim() {
        engine.claims.claim("oo:orders:other", "token", "fingerprint", Duration.ofSeconds(30));
    }

    /** Shutdown writes what is queued on its own thread. */
    @Operation
    public void flush() {
        ((DoneWriter) engine.claims).flush(); // the engine claims through the done-mark queue
    }

    /** The executor's thread: runs the drains scheduled so far. */
    @Operation
    public void executorRuns() {
        executor.runQueued();
    }

    /** After all calls returned and the executor ran what it was given. */
    @Validate
    public void eachQueuedCompletionIsWrittenOnce() {
        executor.runQueued();
        int queued = Math.min(added.get(), CALLS);
        for (int i = 0; i < CALLS; i++) {
            int written = store.completions("oo:orders:" + i);
            if (written != (i < queued ? 1 : 0)) {
                throw new IllegalStateException("completion " + i + (i < queued ? " queued" : " never queued")
                        + ", written " + written + " times");
            }
        }
        if (engine.inFlight() != CALLS - queued) {
            throw new IllegalStateException(engine.inFlight() + " calls in flight, " + (CALLS - queued) + " not completed");
        }
    }

    /** A store that counts completions per key and answers every claim and completion as applied. */
    private static final class CountingStore implements BatchClaimStore {
        private final Map<String, AtomicInteger> completions = new ConcurrentHashMap<>();

        int completions(String key) {
            AtomicInteger n = completions.get(key);
            return n == null ? 0 : n.get();
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            return ClaimResult.ACQUIRED;
        }

        @Override
        public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
            completions.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
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

        /** As Redis: queued completions ride in the claim's round trip. */
        @Override
        public boolean completesWithClaims() {
            return true;
        }

        @Override
        public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
            return BatchClaimStore.looping(this).claimAll(requests);
        }

        @Override
        public List<HolderResult> completeAll(List<CompleteRequest> requests) {
            return BatchClaimStore.looping(this).completeAll(requests);
        }

        @Override
        public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
            return BatchClaimStore.looping(this).completeThenClaim(completions, claims);
        }

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public Optional<String> problem() {
            return Optional.empty();
        }

        @Override
        public void close() {
        }
    }

    /**
     * The race written out: one mark queued (its drain scheduled), then the executor runs the drain
     * while a consumer's thread queues the last mark of the run.
     */
    @Test
    void aMarkQueuedWhileTheDrainFinishesIsWrittenToo() throws NoSuchMethodException {
        ExecutionScenario race = new ExecutionScenario(List.of(actor("complete")),
                List.of(List.of(actor("executorRuns")), List.of(actor("complete"))), List.of(), null);
        new ModelCheckingOptions()
                .iterations(0)
                .addCustomScenario(race)
                .invocationsPerIteration(2_000)
                .check(getClass());
    }

    private static Actor actor(String operation) throws NoSuchMethodException {
        return new Actor(DoneWriterLincheckTest.class.getMethod(operation), List.of(), false, false, false, false, false);
    }

    @Test
    void everyQueuedCompletionIsWrittenExactlyOnceAndNoneIsLeftBehind() {
        new ModelCheckingOptions()
                .iterations(20)
                .invocationsPerIteration(30)
                .threads(2)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(0)
                .check(getClass());
    }
}
