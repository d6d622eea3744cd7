package dev.onceonly.contract;

import dev.onceonly.spi.ClaimAheadSlot;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link ClaimAheadSlot} contract, once, for every implementation: what the guard relies on when
 * it claims ahead (which slots it is offered, that a slot keeps one claim and refuses the rest) and
 * what the connector owes it when it settles a delivery (the kept claim abandoned, nothing kept
 * after). Subclasses provide deliveries received in order and a way to settle one.
 */
public abstract class ClaimAheadSlotContract {

    /**
     * {@return the slots of {@code n} deliveries received in this order and handed to the same
     * guarded method, on a channel that claims at least {@code n} ahead}
     */
    protected abstract List<ClaimAheadSlot> receive(int n);

    /** The connector settles the delivery of {@code slot} (acked, requeued, dead-lettered). */
    protected abstract void settle(ClaimAheadSlot slot);

    @Test
    void behindAreTheLaterDeliveriesInTheirOrder() {
        List<ClaimAheadSlot> slots = receive(3);

        assertSameSlots(slots.subList(1, 3), slots.get(0).behind());
        assertSameSlots(List.of(slots.get(2)), slots.get(1).behind());
        assertSameSlots(List.of(), slots.get(2).behind());
        slots.forEach(s -> assertNotNull(s.message(), "the guard derives each key from its message"));
    }

    @Test
    void aSlotKeepsTheFirstClaimOnly() {
        ClaimAheadSlot slot = receive(1).get(0);
        Counted first = new Counted();
        Counted second = new Counted();

        assertNull(slot.held(), "keeps none before the guard offers one");
        assertTrue(slot.hold(first));
        assertFalse(slot.hold(second), "holds one already: the guard abandons the second itself");
        assertSame(first, slot.held());
        assertEquals(0, first.abandoned.get() + second.abandoned.get(), "the slot abandons nothing while it is not settled");
    }

    @Test
    void aSlotHoldingAClaimOrSettledIsNotOfferedAgain() {
        List<ClaimAheadSlot> slots = receive(4);
        slots.get(1).hold(new Counted());
        settle(slots.get(2));

        assertSameSlots(List.of(slots.get(3)), slots.get(0).behind());
    }

    @Test
    void settlingAbandonsTheKeptClaim() {
        ClaimAheadSlot slot = receive(1).get(0);
        Counted claim = new Counted();
        slot.hold(claim);

        settle(slot);

        assertTrue(claim.abandoned.get() >= 1, "a claim the guard never used would stay held until its lease ends");
        assertNotSame(claim, slot.held(), "the settled slot no longer offers it to the guard");
    }

    @Test
    void aSettledSlotKeepsNoClaim() {
        ClaimAheadSlot slot = receive(1).get(0);
        settle(slot);
        Counted late = new Counted();

        assertFalse(slot.hold(late), "a claim that comes back after the settlement is refused, and its taker abandons it");
        assertNotNull(slot.held(), "nothing is claimed ahead for a settled delivery");
        assertNotSame(late, slot.held());
    }

    @Test
    void exactlyOneOfConcurrentOffersIsKept() throws Exception {
        int threads = 4;
        for (int round = 0; round < 50; round++) {
            ClaimAheadSlot slot = receive(1).get(0);
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Boolean>> offers = new ArrayList<>();
                List<Counted> claims = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    Counted c = new Counted();
                    claims.add(c);
                    offers.add(pool.submit(() -> {
                        start.await();
                        return slot.hold(c);
                    }));
                }
                start.countDown();
                int kept = 0;
                for (int t = 0; t < threads; t++) {
                    if (offers.get(t).get(10, TimeUnit.SECONDS)) {
                        kept++;
                        assertSame(claims.get(t), slot.held());
                    }
                }
                assertEquals(1, kept);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static void assertSameSlots(List<? extends ClaimAheadSlot> expected, List<? extends ClaimAheadSlot> actual) {
        assertEquals(expected.size(), actual.size(), "slots behind");
        for (int i = 0; i < expected.size(); i++) {
            assertSame(expected.get(i), actual.get(i), "slot " + i + " behind");
        }
    }

    /** A claim that counts its abandonments. */
    private static final class Counted implements ClaimAheadSlot.Claim {
        final AtomicInteger abandoned = new AtomicInteger();

        @Override
        public void abandon() {
            abandoned.incrementAndGet();
        }
    }
}
