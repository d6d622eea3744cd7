package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Settlement without a broker: each delivery is settled with the broker once, a delivery whose
 * channel closed is not settled on the new one, and shutdown requeues exactly what waits.
 */
class SettlementTest {

    /** The broker actions, as "ack 1" or "nack 2 requeue=true". */
    private final List<String> sent = new CopyOnWriteArrayList<>();
    private final Channel channel = (Channel) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Channel.class},
            (proxy, method, args) -> {
                switch (method.getName()) {
                    case "basicAck" -> sent.add("ack " + args[0]);
                    case "basicNack" -> sent.add("nack " + args[0] + " requeue=" + args[2]);
                    default -> throw new UnsupportedOperationException(method.getName());
                }
                return null;
            });
    private final Delivery.ChannelGeneration generation = new Delivery.ChannelGeneration();
    private final Handover handover = new Handover();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final Settlement settlement = new Settlement(Duration.ofMillis(1), scheduler, handover);

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private Delivery delivery(long tag) {
        IncomingRabbitMetadata m = new IncomingRabbitMetadata("orders", "q", "x", "rk", false, tag,
                new AMQP.BasicProperties(), new byte[] {1}, 1);
        Delivery d = new Delivery(channel, m, new Object(), generation, false, MessageTracing.NONE);
        settlement.track(d);
        handover.post(d.payload, Dispatch.of(m));
        return d;
    }

    @Test
    void aDeliveryIsSettledOnceAndLeavesTheHandoverAndTheUnsettledSet() {
        Delivery d = delivery(1);
        assertEquals(1, settlement.unsettledCount());
        assertFalse(settlement.allSettled());
        settlement.ack(d);
        settlement.ack(d);
        assertFalse(settlement.requeue(d), "already settled");
        assertEquals(List.of("ack 1"), sent);
        assertTrue(d.isSettled());
        assertTrue(settlement.allSettled());
        assertNull(handover.take(d.payload), "the application can no longer take it");

        Delivery r = delivery(2);
        assertTrue(settlement.requeue(r));
        assertEquals(List.of("ack 1", "nack 2 requeue=true"), sent);
        assertEquals(0, handover.pending());
    }

    /** The broker took the deliveries of a closed channel back: nothing is sent for them on the new one. */
    @Test
    void aDeliveryOfAClosedChannelIsSettledWithoutABrokerAction() {
        Delivery acked = delivery(1);
        Delivery requeued = delivery(2);
        Delivery forgotten = delivery(3);
        generation.next();
        settlement.ack(acked);
        assertTrue(settlement.requeue(requeued), "settled, though nothing was sent");
        settlement.forget(forgotten);
        assertEquals(List.of(), sent);
        assertTrue(settlement.allSettled());
    }

    @Test
    void aHeldDeliveryRunsItsNextStepAfterTheDelayUnlessSettledMeanwhile() throws Exception {
        Delivery d = delivery(1);
        CountDownLatch ran = new CountDownLatch(1);
        settlement.hold(d, Duration.ofMillis(1), ran::countDown);
        assertEquals(Delivery.Stage.HELD, d.stage());
        assertTrue(ran.await(10, TimeUnit.SECONDS));

        Delivery settled = delivery(2);
        CountDownLatch never = new CountDownLatch(1);
        settlement.hold(settled, Duration.ofMillis(50), never::countDown);
        settlement.ack(settled);
        assertTrue(settled.hold.isCancelled(), "settling cancels the hold");
        assertFalse(never.await(200, TimeUnit.MILLISECONDS));

        settlement.holdThenRequeue(delivery(3));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!sent.contains("nack 3 requeue=true") && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(List.of("ack 2", "nack 3 requeue=true"), sent);
    }

    /** A delivery whose channel closed while it was held is redelivered by the broker: no copy of it is made here. */
    @Test
    void aHeldDeliveryWhoseChannelClosedIsForgotten() throws Exception {
        Delivery d = delivery(1);
        CountDownLatch ran = new CountDownLatch(1);
        settlement.hold(d, Duration.ofMillis(20), ran::countDown);
        generation.next();
        assertFalse(ran.await(300, TimeUnit.MILLISECONDS));
        assertTrue(d.isSettled());
        assertEquals(List.of(), sent);
    }

    @Test
    void aHoldTheSchedulerRefusesRequeuesAtOnce() {
        scheduler.shutdownNow();
        Delivery d = delivery(1);
        settlement.hold(d, Duration.ofSeconds(30), () -> { });
        assertEquals(List.of("nack 1 requeue=true"), sent);
    }

    /**
     * Shutdown requeues what waits (buffered, held) at once and leaves the delivery the application
     * is processing to finish; holds after that requeue at once; the last step requeues the rest.
     */
    @Test
    void shutdownRequeuesWhatWaitsFirstAndTheRestLast() {
        Delivery buffered = delivery(1);
        Delivery held = delivery(2);
        settlement.hold(held, Duration.ofSeconds(30), () -> { });
        Delivery processing = delivery(3);
        processing.stage(Delivery.Stage.PROCESSING);
        Delivery publishing = delivery(4);
        publishing.stage(Delivery.Stage.PUBLISHING);
        settlement.ack(delivery(5));

        assertEquals(2, settlement.stopAndGiveBackWaiting(settlement::requeue));
        assertTrue(buffered.isSettled());
        assertTrue(held.isSettled());
        assertFalse(processing.isSettled());
        assertEquals(2, settlement.unsettledCount());

        Delivery nackedLate = delivery(6);
        settlement.hold(nackedLate, Duration.ofSeconds(30), () -> { });
        assertTrue(nackedLate.isSettled(), "stopping: not held");

        assertEquals(2, settlement.requeueAll());
        assertTrue(settlement.allSettled());
        assertEquals(0, settlement.requeueAll());
        assertEquals(6, sent.size(), sent.toString());
        assertTrue(sent.containsAll(List.of("ack 5", "nack 1 requeue=true", "nack 2 requeue=true", "nack 3 requeue=true",
                "nack 4 requeue=true", "nack 6 requeue=true")), sent.toString());
    }
}
