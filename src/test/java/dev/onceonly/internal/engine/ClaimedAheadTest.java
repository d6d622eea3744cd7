package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.LogCapture;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A claim taken ahead of its message, on its own: the guard takes it only for the consumer and key
 * it was taken for and while it is still held; any other end gives it back to the store.
 */
class ClaimedAheadTest {

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final InMemoryClaimStore store = new InMemoryClaimStore(1_000, new MutableClock());
    private final AtomicLong nanos = new AtomicLong(5_000_000_000L);
    private final GuardEngine engine = new GuardEngine(store, TransactionRunner.NONE, null, scheduler, e -> { },
            new KeyDeriver("oo:"), nanos::get);
    private final ConsumerSettings orders = Settings.withLease(Settings.defaults("orders", KeyStrategy.CONTENT), Duration.ofSeconds(3));
    private final MessageKey key = new MessageKey("oo:orders:a", "a", "", null);

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private ClaimedAhead claimed() {
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "t", "", orders.lease()).state());
        return new ClaimedAhead(engine.holders, orders, key, "t", ClaimResult.ACQUIRED, nanos.get());
    }

    /** Whether the store has the key held by someone; a probe that gets it gives it back. */
    private boolean held() {
        ClaimResult probe = store.claim(key.storeKey(), "probe", "", orders.lease());
        if (probe.state() == ClaimState.ACQUIRED) {
            store.release(key.storeKey(), "probe");
        }
        return probe.state() == ClaimState.IN_PROGRESS;
    }

    @Test
    void theGuardTakesItOnceForItsConsumerAndKey() {
        ClaimedAhead early = claimed();
        assertEquals(nanos.get() + Duration.ofSeconds(1).toNanos(), early.renewAtNanos(), "renewed after a third of the lease");
        assertTrue(early.take(orders, key));
        assertFalse(early.take(orders, key), "taken once");
        early.abandon();
        assertTrue(held(), "the guard holds it now: abandoning after the take gives nothing back");
    }

    @Test
    void anotherConsumerOrKeyGetsNothingAndTheClaimIsGivenBack() {
        ConsumerSettings other = Settings.defaults("shipping", KeyStrategy.CONTENT);
        assertFalse(claimed().take(other, key));
        assertFalse(held());

        MessageKey otherKey = new MessageKey("oo:orders:b", "b", "", null);
        assertFalse(claimed().take(orders, otherKey));
        assertFalse(held());
    }

    @Test
    void anAbandonedClaimIsGivenBackOnce() {
        ClaimedAhead early = claimed();
        early.abandon();
        assertFalse(held());
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "t", "", orders.lease()).state());
        early.abandon();
        assertTrue(held(), "a second abandon does not release the token's new claim");
        assertFalse(early.take(orders, key));
    }

    @Test
    void aRenewalMovesTheNextOneALeaseThirdOnAndALostClaimIsNotTaken() {
        ClaimedAhead early = claimed();
        early.renew(9_000_000_000L);
        assertEquals(9_000_000_000L + Duration.ofSeconds(1).toNanos(), early.renewAtNanos());
        store.release(key.storeKey(), "t");
        store.claim(key.storeKey(), "someone-else", "", orders.lease());
        early.renew(10_000_000_000L);
        assertEquals(9_000_000_000L + Duration.ofSeconds(1).toNanos(), early.renewAtNanos(), "not renewed");
        assertFalse(early.take(orders, key), "lost: the guard claims again in the message's turn");
        assertTrue(held(), "someone else's claim is left alone");
    }

    /** Unconfirmed for a whole lease since its request was sent, it may be another holder's: not taken from then on. */
    @Test
    void aClaimIsTakenUntilALeaseAfterItsRequestWasSent() {
        ClaimedAhead early = claimed();
        nanos.addAndGet(orders.lease().toNanos() - 1);
        assertTrue(early.take(orders, key));

        ClaimedAhead late = new ClaimedAhead(engine.holders, orders, new MessageKey("oo:orders:c", "c", "", null), "t2", ClaimResult.ACQUIRED, nanos.get());
        nanos.addAndGet(orders.lease().toNanos());
        assertFalse(late.take(orders, new MessageKey("oo:orders:c", "c", "", null)));
    }

    /** A done answer holds nothing: no renewal, nothing given back, and the guard takes it however long it waited. */
    @Test
    void aDoneAnswerHoldsNothingAndIsTakenAfterAnyWait() {
        store.claim(key.storeKey(), "t", "", orders.lease());
        store.complete(key.storeKey(), "t", "", Duration.ofMinutes(1));
        ClaimedAhead done = new ClaimedAhead(engine.holders, orders, key, "t", ClaimResult.done(""), nanos.get());
        assertEquals(0, done.renewAtNanos(), "never due: not held by the sweep");
        nanos.addAndGet(orders.lease().toNanos() * 2);
        assertTrue(done.take(orders, key));
    }

    /** The store failed the renewal or the release: reported (metrics), the claim then runs out with its lease. */
    @Test
    void aRenewalOrReleaseTheStoreFailedIsReported() {
        List<String> errors = new CopyOnWriteArrayList<>();
        StoreFailurePolicyTest.CountingStore failing = new StoreFailurePolicyTest.CountingStore(store);
        GuardEngine onFailing = new GuardEngine(failing, TransactionRunner.NONE, null, scheduler, new GuardListener() {
            @Override
            public void onOutcome(GuardEvent event) {
            }

            @Override
            public void onStoreError(String consumer, String operation) {
                errors.add(consumer + " " + operation);
            }
        }, new KeyDeriver("oo:"), nanos::get);
        store.claim(key.storeKey(), "t", "", orders.lease());
        ClaimedAhead early = new ClaimedAhead(onFailing.holders, orders, key, "t", ClaimResult.ACQUIRED, nanos.get());
        long due = early.renewAtNanos();
        failing.down = true;
        try (LogCapture log = new LogCapture()) {
            early.renew(due);
            assertTrue(log.contains("ONCE0202W"), log.lines().toString());
        }
        assertEquals(due, early.renewAtNanos(), "not renewed: due again at the next sweep");
        early.abandon();
        assertEquals(List.of("orders extend", "orders release"), errors);
        failing.down = false;
        assertTrue(held(), "left to run out with its lease");
    }
}
