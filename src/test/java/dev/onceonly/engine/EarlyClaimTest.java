package dev.onceonly.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
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
class EarlyClaimTest {

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

    private EarlyClaim claimed() {
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "t", "", orders.lease()).state());
        return new EarlyClaim(engine, orders, key, "t", ClaimResult.ACQUIRED, nanos.get());
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
        EarlyClaim early = claimed();
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
        EarlyClaim early = claimed();
        early.abandon();
        assertFalse(held());
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "t", "", orders.lease()).state());
        early.abandon();
        assertTrue(held(), "a second abandon does not release the token's new claim");
        assertFalse(early.take(orders, key));
    }

    @Test
    void aRenewalMovesTheNextOneALeaseThirdOnAndALostClaimIsNotTaken() {
        EarlyClaim early = claimed();
        early.renew(9_000_000_000L);
        assertEquals(9_000_000_000L + Duration.ofSeconds(1).toNanos(), early.renewAtNanos());
        store.release(key.storeKey(), "t");
        store.claim(key.storeKey(), "someone-else", "", orders.lease());
        early.renew(10_000_000_000L);
        assertEquals(9_000_000_000L + Duration.ofSeconds(1).toNanos(), early.renewAtNanos(), "not renewed");
        assertFalse(early.take(orders, key), "lost: the guard claims again in the message's turn");
        assertTrue(held(), "someone else's claim is left alone");
    }
}
