package dev.onceonly.internal.rabbitmq;

import dev.onceonly.contract.ClaimAheadSlotContract;
import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.Handover;
import dev.onceonly.testing.DrainedScheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The connector's {@link Delivery} as a {@link ClaimAheadSlot}: deliveries received into a channel's
 * {@link ClaimAheadLine} and settled through {@link Settlement}, as the connector does.
 */
class DeliveryClaimAheadSlotTest extends ClaimAheadSlotContract {

    private static final int CLAIM_AHEAD = 8;

    private final CountingBroker broker = new CountingBroker(CLAIM_AHEAD);
    private final Settlement settlement = new Settlement(Duration.ofSeconds(1), new DrainedScheduler(), new Handover());
    private final ClaimAheadLine<Delivery> line = new ClaimAheadLine<>(CLAIM_AHEAD);
    private int tag;

    @Override
    protected List<ClaimAheadSlot> receive(int n) {
        List<ClaimAheadSlot> slots = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Delivery d = broker.delivery(++tag);
            settlement.track(d);
            line.received(d);
            slots.add(d.claimAhead());
        }
        return slots;
    }

    @Override
    protected void settle(ClaimAheadSlot slot) {
        settlement.requeue((Delivery) slot);
    }
}
