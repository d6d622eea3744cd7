package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.TestRabbit;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The optional queue arguments of an incoming channel, against the machine's RabbitMQ: declared on
 * the queue for real (the broker enforces them), and a queue that exists with other arguments is
 * still consumed.
 */
class QueueArgumentsTest {

    static final Duration LIMIT = Duration.ofSeconds(20);

    final String queue = "onceonly.test." + UUID.randomUUID();
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final List<InboundChannel> channels = new ArrayList<>();
    TestRabbit rabbit;
    Connection connection;

    @BeforeEach
    void connect() throws Exception {
        rabbit = new TestRabbit();
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        connection = f.newConnection("onceonly-tests-queue-arguments");
    }

    @AfterEach
    void close() throws Exception {
        for (InboundChannel c : channels) {
            c.stopConsuming();
            c.drainAndClose();
        }
        connection.close();
        rabbit.deleteChannelTopology(queue);
        rabbit.close();
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    private IncomingSettings settings(String... keyValues) {
        Map<String, String> props = new HashMap<>(Map.of("channel-name", "args", "queue.name", queue, "host", "127.0.0.1",
                "retry-delay", "100ms", "max-attempts", "2", "drain-timeout", "2s", "network-recovery-interval", "500ms"));
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        return TestChannelConfig.of(props, ChannelConfig.Direction.INCOMING).incoming();
    }

    /** Declares the channel's topology as the connector does when it connects, without consuming. */
    private void declare(IncomingSettings s) throws Exception {
        Channel ch = Topology.declare(connection, connection.createChannel(), s);
        ch.close();
    }

    /** Publishes with confirms on a channel of its own; {@code false}: the broker nacked (refused) it. */
    private boolean publishConfirmed(Channel ch, String body) throws Exception {
        ch.basicPublish("", queue, true, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                body.getBytes(StandardCharsets.UTF_8));
        return ch.waitForConfirms(10_000);
    }

    /**
     * Declares a reject-publish queue of at most two messages and publishes (with confirms) until the
     * broker refuses one.
     *
     * @return how many were accepted before the first refusal
     */
    private int acceptedBeforeRefusal(String queueType) throws Exception {
        declare(settings("queue.type", queueType, "queue.max-length", "2", "queue.overflow", "reject-publish"));
        String args = TestRabbit.queueArguments(queue);
        assertTrue(has(args, "x-max-length", "2") && has(args, "x-overflow", "\"reject-publish\""), args);
        try (Channel ch = connection.createChannel()) {
            ch.confirmSelect();
            for (int accepted = 0; accepted < 10; accepted++) {
                if (!publishConfirmed(ch, "m" + accepted)) {
                    assertFalse(publishConfirmed(ch, "after the refusal"), "still refused");
                    return accepted;
                }
            }
        }
        throw new AssertionError("the broker accepted ten publishes to a queue of at most two");
    }

    @Test
    void aClassicQueueWithALengthLimitRefusesPublishesPastIt() throws Exception {
        assertEquals(2, acceptedBeforeRefusal("classic"), "the third publish is nacked");
        assertEquals(2, TestRabbit.total(queue));
        assertEquals(0, TestRabbit.total(queue + ".dlq"), "reject-publish drops nothing");
    }

    /**
     * A quorum queue checks the limit when it applies a publish, so on RabbitMQ 3.10 it takes one
     * message past it (the one that reaches the limit) before it refuses: at most max-length + 1.
     */
    @Test
    void aQuorumQueueWithALengthLimitRefusesPublishesPastIt() throws Exception {
        int accepted = acceptedBeforeRefusal("quorum");
        assertTrue(accepted == 2 || accepted == 3, "accepted " + accepted);
        await("the accepted ones in the queue", LIMIT, () -> TestRabbit.total(queue), n -> n == accepted);
        String args = TestRabbit.queueArguments(queue);
        assertTrue(has(args, "x-queue-type", "\"quorum\"") && has(args, "x-delivery-limit", "20"), args);
    }

    /**
     * A classic queue whose broker may drop messages on its own (TTL, drop-head) is declared with
     * the channel's dead-letter exchange: what expires or is pushed out lands in the dead-letter queue.
     */
    @Test
    void expiredAndDroppedMessagesOfAClassicQueueLandInTheDeadLetterQueue() throws Exception {
        declare(settings("queue.ttl", "300", "queue.max-length", "2", "queue.overflow", "drop-head"));
        String args = TestRabbit.queueArguments(queue);
        assertTrue(has(args, "x-message-ttl", "300") && has(args, "x-dead-letter-exchange", "\"" + queue + ".dlx\""), args);
        try (Channel ch = connection.createChannel()) {
            ch.confirmSelect();
            for (String body : List.of("one", "two", "three")) {
                assertTrue(publishConfirmed(ch, body));
            }
        }
        await("all three dead-lettered (one pushed out, two expired)", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 3);
        List<String> reasons = new ArrayList<>();
        for (GetResponse r : rabbit.drain(queue + ".dlq")) {
            @SuppressWarnings("unchecked")
            var death = (List<Map<String, Object>>) r.getProps().getHeaders().get("x-death");
            reasons.add(new String(r.getBody(), StandardCharsets.UTF_8) + ":" + death.get(0).get("reason"));
        }
        assertEquals(List.of("one:maxlen", "two:expired", "three:expired"), reasons);
        assertEquals(0, TestRabbit.total(queue));
    }

    /** Two channels on a single-active-consumer queue: the broker delivers to one of them only. */
    @Test
    void aSingleActiveConsumerQueueDeliversToOneConsumer() throws Exception {
        Acking first = start(settings("queue.single-active-consumer", "true", "queue.type", "quorum"));
        Acking second = start(settings("queue.single-active-consumer", "true", "queue.type", "quorum"));
        // A single-active-consumer queue counts only the active consumer: ask the channels instead.
        await("both consumers registered", LIMIT, () -> channels.stream().allMatch(InboundChannel::connected), up -> up);
        assertTrue(has(TestRabbit.queueArguments(queue), "x-single-active-consumer", "true"));
        for (int i = 0; i < 10; i++) {
            rabbit.publish("", queue, "m" + i);
        }
        await("all ten acked", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        int a = first.received.size();
        int b = second.received.size();
        assertEquals(10, a + b);
        assertTrue(a == 0 || b == 0, "one consumer got them all: " + a + " and " + b);
    }

    /**
     * A classic queue that already exists with arguments the channel does not configure. Before,
     * the declaration failed (PRECONDITION_FAILED) at every connection attempt and the channel
     * never consumed; now it is used as it is, with a warning naming the difference.
     */
    @Test
    void aClassicQueueThatExistsWithOtherArgumentsIsConsumed() throws Exception {
        try (Channel ch = connection.createChannel()) {
            ch.queueDeclare(queue, true, false, false, Map.of("x-max-length", 100));
        }
        try (LogCapture log = new LogCapture()) {
            Acking probe = start(settings());
            await("the consumer", LIMIT, () -> consumers(queue), n -> n == 1);
            rabbit.publish("", queue, "after");
            assertEquals("after", probe.received.poll(LIMIT.toSeconds(), TimeUnit.SECONDS));
            assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("ONCE0515W") && l.contains("x-max-length")), log.lines().toString());
        }
        assertTrue(has(TestRabbit.queueArguments(queue), "x-max-length", "100"), "the queue was left as it was");
    }

    /** A quorum queue that exists without the configured length limit: consumed as it is, with both warnings. */
    @Test
    void aQuorumQueueThatExistsWithoutTheConfiguredLimitIsConsumed() throws Exception {
        rabbit.declareQuorumQueue(queue);
        try (LogCapture log = new LogCapture()) {
            Acking probe = start(settings("queue.type", "quorum", "queue.max-length", "5"));
            await("the consumer", LIMIT, () -> consumers(queue), n -> n == 1);
            rabbit.publish("", queue, "after");
            assertEquals("after", probe.received.poll(LIMIT.toSeconds(), TimeUnit.SECONDS));
            assertTrue(log.contains("ONCE0511W"), log.lines().toString());
            assertTrue(log.contains("ONCE0515W"), log.lines().toString());
        }
    }

    /** Whether {@code rabbitmqctl}'s JSON of a queue's arguments has {@code name} with {@code json} as its value. */
    private static boolean has(String arguments, String name, String json) {
        return arguments.contains("[\"" + name + "\",") && arguments.matches(
                ".*\\[\"" + java.util.regex.Pattern.quote(name) + "\",\"[a-z]+\"," + java.util.regex.Pattern.quote(json) + "\\].*");
    }

    private int consumers(String q) {
        try {
            return rabbit.consumers(q);
        } catch (Exception e) {
            return -1; // not declared yet
        }
    }

    /** Starts a channel whose subscriber acks every message as it arrives and records its payload. */
    private Acking start(IncomingSettings s) {
        InboundChannel c = new InboundChannel(s, resources, new Handover(), () -> MessageTracing.NONE, () -> DeadLetterListener.NONE);
        channels.add(c);
        Acking subscriber = new Acking();
        c.subscribe(subscriber);
        c.start();
        return subscriber;
    }

    /** Requests without bound, acks each message, keeps the payloads. */
    static final class Acking implements Subscriber<Message<?>> {
        final BlockingQueue<Object> received = new LinkedBlockingQueue<>();

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Message<?> m) {
            received.add(m.getPayload());
            m.ack();
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
    }
}
