package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.Handover;
import dev.onceonly.testing.DrainedScheduler;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Model checks {@link Settlement} under Lincheck: the application's ack, a requeue, a nack held for
 * the retry delay and that delay ending on the scheduler's thread, and both steps of a shutdown race
 * for the same deliveries, in every interleaving the checker explores.
 *
 * <p>Properties: settle-once. Each delivery is sent to the broker (basicAck, basicNack or basicReject
 * on its channel, counted by a {@link CountingBroker}) exactly once if it was settled and never if
 * not; a delivery is given back at most once and never handed to the application once it is; and
 * once all calls returned, {@link Settlement#unsettledCount} counts exactly the deliveries not
 * settled, and the {@link Handover} holds exactly the ones handed over and not settled. The
 * operations return nothing: a shutdown settles several deliveries one after another, not
 * atomically, so linearizability would not fit; the properties are checked after each run
 * ({@link Validate}).
 */
@Param(name = "d", gen = IntGen.class, conf = "0:" + (SettlementLincheckTest.DELIVERIES - 1))
public class SettlementLincheckTest {

    static final int DELIVERIES = 2;

    private final CountingBroker broker = new CountingBroker(DELIVERIES);
    private final DrainedScheduler scheduler = new DrainedScheduler();
    private final Handover handover = new Handover();
    private final Settlement settlement = new Settlement(Duration.ofSeconds(1), scheduler, handover);
    private final Delivery[] deliveries = new Delivery[DELIVERIES];
    private final AtomicInteger received = new AtomicInteger();
    /** Set once a delivery was handed to the application: only then can it ack or nack it. */
    private final AtomicIntegerArray handedOver = new AtomicIntegerArray(DELIVERIES);
    /** How often a stop gave each delivery back (a requeue here; a published copy on a quorum queue). */
    private final AtomicIntegerArray givenBack = new AtomicIntegerArray(DELIVERIES);

    /**
     * Tracks nothing yet: the model checker makes identity hash codes deterministic only inside the
     * operations, so a delivery hashed into a set here would not be found there.
     */
    public SettlementLincheckTest() {
        for (int i = 0; i < DELIVERIES; i++) {
            deliveries[i] = broker.delivery(i + 1);
        }
    }

    /** amqp-client's thread: the next delivery is received ({@link Settlement#track}) and buffered. */
    @Operation(nonParallelGroup = "consumer")
    public void receive() {
        int i = received.getAndIncrement();
        if (i < DELIVERIES) {
            settlement.track(deliveries[i]);
        }
    }

    /**
     * The emitting loop's thread: a buffered delivery is handed to the application (posted on the
     * handover), as {@link InboundChannel} does, unless a stop took it first.
     */
    @Operation(nonParallelGroup = "emit")
    public void handOver(@Param(name = "d") int i) {
        Delivery d = deliveries[i];
        if (i < Math.min(received.get(), DELIVERIES) && d.handOver()) {
            handover.post(d.payload, d);
            if (d.isSettled()) {
                handover.withdraw(d.payload);
            } else {
                handedOver.set(i, 1);
            }
        }
    }

    @Operation
    public void ack(@Param(name = "d") int i) {
        if (handedOver.get(i) == 1) {
            settlement.ack(deliveries[i]);
        }
    }

    @Operation
    public void requeue(@Param(name = "d") int i) {
        if (handedOver.get(i) == 1) {
            settlement.requeue(deliveries[i]);
        }
    }

    /** Nacked for a retry: held until the retry delay ends ({@link #retryDelaysEnd}). */
    @Operation
    public void holdThenRequeue(@Param(name = "d") int i) {
        if (handedOver.get(i) == 1) {
            settlement.holdThenRequeue(deliveries[i]);
        }
    }

    /** The scheduler's thread: the retry delays held so far end. */
    @Operation
    public void retryDelaysEnd() {
        scheduler.runQueued();
    }

    /** A stop on a classic queue: what waits is requeued. */
    @Operation
    public void stopAndGiveBackWaiting() {
        settlement.stopAndGiveBackWaiting(this::giveBack);
    }

    private void giveBack(Delivery d) {
        givenBack.incrementAndGet((int) d.deliveryTag - 1);
        settlement.requeue(d);
    }

    @Operation
    public void requeueAll() {
        settlement.requeueAll();
    }

    /**
     * After all calls returned: each delivery settled with the broker once, or not at all and still
     * tracked; given back at most once, and then never handed over; on the handover exactly while
     * handed over and not settled.
     */
    @Validate
    public void eachDeliveryIsSettledWithTheBrokerOnce() {
        int unsettled = 0;
        for (int i = 0; i < Math.min(received.get(), DELIVERIES); i++) {
            Delivery d = deliveries[i];
            boolean settled = d.isSettled();
            int sent = broker.settlements(i + 1);
            if (sent != (settled ? 1 : 0)) {
                throw new IllegalStateException("delivery " + (i + 1) + (settled ? " settled" : " not settled")
                        + ", sent to the broker " + sent + " times");
            }
            if (givenBack.get(i) > 1 || givenBack.get(i) == 1 && handedOver.get(i) == 1 && d.stage() != Delivery.Stage.RETURNING) {
                throw new IllegalStateException("delivery " + (i + 1) + " given back " + givenBack.get(i)
                        + " times" + (handedOver.get(i) == 1 ? ", handed over too" : ""));
            }
            boolean posted = handover.take(d.payload) != null;
            if (posted != (handedOver.get(i) == 1 && !settled)) {
                throw new IllegalStateException("delivery " + (i + 1) + (posted ? " on" : " not on") + " the handover, "
                        + (handedOver.get(i) == 1 ? "handed over" : "not handed over") + (settled ? ", settled" : ", not settled"));
            }
            unsettled += settled ? 0 : 1;
        }
        if (settlement.unsettledCount() != unsettled) {
            throw new IllegalStateException(unsettled + " not settled, but " + settlement.unsettledCount() + " tracked");
        }
    }

    @Test
    void eachDeliveryIsSettledWithTheBrokerExactlyOnceHoweverTheCallsRace() {
        new ModelCheckingOptions()
                .iterations(10)
                .invocationsPerIteration(100)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(2)
                .actorsAfter(0)
                .check(getClass());
    }
}
