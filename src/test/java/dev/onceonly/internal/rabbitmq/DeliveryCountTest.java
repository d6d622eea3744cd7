package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Envelope;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.TestRabbit;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The attempt count read from a quorum queue's {@code x-delivery-count}. The broker adds its count
 * to redeliveries; a header of that name the publisher set reaches the first delivery to a consumer
 * unchanged (RabbitMQ 3.10 here; from 3.12 the broker leaves the header out of first deliveries
 * altogether, rabbitmq-server#7732). Counted as returns, it would spend attempts the message never
 * had, up to dead-lettering it unprocessed: the connector reads it on redeliveries only.
 */
class DeliveryCountTest {

    static final Duration LIMIT = Duration.ofSeconds(20);

    final String queue = "onceonly.unit.count." + UUID.randomUUID();
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final InboundChannelTest.Probe probe = new InboundChannelTest.Probe();
    TestRabbit rabbit;
    InboundChannel channel;

    @BeforeEach
    void connect() throws Exception {
        rabbit = new TestRabbit();
    }

    @AfterEach
    void close() throws Exception {
        if (channel != null) {
            channel.stopConsuming();
            channel.drainAndClose();
        }
        rabbit.deleteChannelTopology(queue);
        rabbit.close();
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    /**
     * Whatever the broker does with the header on a first delivery, the connector counts it only on
     * a redelivery.
     */
    @Test
    void onlyARedeliveryCountsTheHeader() {
        List<Delivery> received = new ArrayList<>();
        IncomingSettings settings = TestChannelConfig.of(Map.of("channel-name", "count-unit", "queue.name", queue,
                "queue.type", "quorum"), ChannelConfig.Direction.INCOMING).incoming();
        QueueConsumer consumer = new QueueConsumer(null, settings, CopySignature.of(settings), () -> MessageTracing.NONE,
                received::add, tag -> { }, () -> { });

        consumer.handleDelivery("tag", new Envelope(1, false, "orders", "placed"), forged(7), new byte[] {1});
        consumer.handleDelivery("tag", new Envelope(2, true, "orders", "placed"), forged(2), new byte[] {1});

        assertEquals(1, received.get(0).metadata.attempt(), "a first delivery is attempt 1, whatever the publisher wrote");
        assertEquals(3, received.get(1).metadata.attempt(), "a redelivery counts the broker's returns");
    }

    /** The same against the machine's broker, end to end. */
    @Test
    void aPublishersDeliveryCountHeaderIsNotCountedAsReturns() throws Exception {
        channel = start();
        probe.request(1);

        rabbit.publish("", queue, forged(7), "forged-count");

        Message<?> m = probe.next();
        assertEquals(1, m.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt(),
                "the first delivery is attempt 1, whatever the publisher wrote");
        m.ack().toCompletableFuture().get();
    }

    /**
     * A graceful stop gives back what the application was not handed. On a quorum queue a requeue
     * (or the channel's close) raises the broker's count: the connector publishes them again as
     * copies that are not attempts, so the next consumer sees attempt 1 still.
     */
    @Test
    void deliveriesGivenBackAtAStopKeepTheirAttemptOnAQuorumQueue() throws Exception {
        channel = start("prefetch", "5");
        for (int i = 0; i < 4; i++) {
            rabbit.publish("", queue, new AMQP.BasicProperties.Builder().messageId("stop-" + i).build(), "stop-" + i);
        }
        await("the deliveries buffered", LIMIT, () -> channel.unsettledCount(), n -> n == 4);

        channel.stopConsuming();
        channel.drainAndClose();
        channel = start("prefetch", "5");
        probe.request(4);

        for (int i = 0; i < 4; i++) {
            Message<?> m = probe.next();
            assertEquals(1, m.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt(),
                    "given back unprocessed: not an attempt");
            m.ack().toCompletableFuture().get();
        }
    }

    private InboundChannel start(String... keyValues) throws Exception {
        Map<String, String> props = new java.util.HashMap<>(Map.of("channel-name", "count-unit", "queue.name", queue,
                "queue.type", "quorum", "host", "127.0.0.1", "drain-timeout", "2s"));
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        InboundChannel c = new InboundChannel(TestChannelConfig.of(props, ChannelConfig.Direction.INCOMING).incoming(),
                resources, new Handover(), () -> MessageTracing.NONE, () -> DeadLetterListener.NONE);
        c.subscribe(probe);
        c.start();
        await("the consumer", LIMIT, this::consumers, n -> n == 1);
        return c;
    }

    private int consumers() {
        try {
            return rabbit.consumers(queue);
        } catch (Exception e) {
            return -1; // not declared yet
        }
    }

    private static AMQP.BasicProperties forged(int count) {
        return new AMQP.BasicProperties.Builder().headers(Map.of(RabbitHeaders.DELIVERY_COUNT, count)).build();
    }
}
