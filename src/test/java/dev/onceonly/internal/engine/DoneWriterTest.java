package dev.onceonly.internal.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the done-mark queue ({@link DoneWriter}) does when it cannot write as planned: the executor
 * refuses the drain (a stopping application), or the store fails a batch in a way its contract does
 * not allow. Either way no committed message may be left in progress, nor any call unfinished (the
 * engine's close would wait for it). The calls are the engine's own ({@link HeldClaim} finalised by the {@link Finaliser}, ledger
 * on), their keys claimed in the in-memory store, as in {@link DoneWriterLincheckTest}.
 */
class DoneWriterTest {

    private final MutableClock clock = new MutableClock();
    private final InMemoryClaimStore memory = new InMemoryClaimStore(1_000, clock);
    private final StoreFailurePolicyTest.CountingStore store = new StoreFailurePolicyTest.CountingStore(memory);
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    private final List<String> storeErrors = new CopyOnWriteArrayList<>();
    private final AtomicLong nanos = new AtomicLong();
    private final GuardEngine engine = new GuardEngine(store, TransactionRunner.NONE, null, executor, new GuardListener() {
        @Override
        public void onOutcome(dev.onceonly.api.GuardEvent event) {
        }

        @Override
        public void onStoreError(String consumer, String operation) {
            storeErrors.add(operation);
        }
    }, new KeyDeriver("oo:"), nanos::get);
    private final ConsumerSettings settings = Settings.withLease(
            Settings.withLedger(Settings.defaults("orders", KeyStrategy.CONTENT), true), Duration.ofMillis(60));

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    /** A committed call whose key {@code i} it holds, counted in flight as the engine counts it. */
    private HeldClaim committed(int i) {
        MessageKey key = new MessageKey("oo:orders:" + i, "digest-" + i, "", new byte[0]);
        memory.claim(key.storeKey(), "token-" + i, "", settings.lease());
        HeldClaim call = new HeldClaim(engine.holders, settings, key, "token-" + i, 0, 0);
        engine.finaliser.started();
        return call;
    }

    private ClaimState state(int i) {
        return memory.claim("oo:orders:" + i, "probe", "", settings.lease()).state();
    }

    /** A stopping application's executor refuses the drain: the mark is written on the adding thread, at once. */
    @Test
    void aMarkTheExecutorRefusesIsWrittenOnTheAddingThread() {
        HeldClaim call = committed(1);
        executor.shutdownNow();
        engine.finaliser.complete(call, true);
        assertEquals(ClaimState.DONE, state(1));
        assertEquals(0, engine.inFlight());
    }

    /**
     * A batch the store failed with an exception outside its contract: each call of it goes to its
     * own retry by the sweep, as after a store failure, and finishes once the store answers.
     */
    @Test
    void aBatchThatFailedOutsideTheStoreContractIsRetriedByTheSweep() throws Exception {
        HeldClaim first = committed(1);
        HeldClaim second = committed(2);
        store.broken = true;
        engine.finaliser.complete(first, true);
        engine.finaliser.complete(second, true);
        Eventually.await("both handed to the sweep", Duration.ofSeconds(5), () -> List.copyOf(storeErrors), e -> e.size() >= 2);
        assertEquals(List.of("complete", "complete"), storeErrors.subList(0, 2));
        assertEquals(2, engine.inFlight(), "unfinished until written");
        assertEquals(ClaimState.IN_PROGRESS, state(1));

        store.broken = false;
        nanos.set(Duration.ofMillis(100).toNanos()); // due for the sweep, within the ten leases of retries
        Eventually.await("both written", Duration.ofSeconds(5), engine::inFlight, n -> n == 0);
        assertEquals(ClaimState.DONE, state(1));
        assertEquals(ClaimState.DONE, state(2));
    }
}
