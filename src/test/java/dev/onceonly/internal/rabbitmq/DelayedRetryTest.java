package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

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

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failed deliveries whose backoff is held by the broker, in delay queues, against the machine's
 * RabbitMQ: the round trip, the attempt count across it, the queues' arguments, and that failing
 * messages no longer hold up the others.
 */
class DelayedRetryTest {

    static final Duration LIMIT = Duration.ofSeconds(20);

    final String queue = "onceonly.unit.delay." + UUID.randomUUID();
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
        for (String q : delayQueues()) {
            rabbit.deleteQueue(q);
        }
        rabbit.deleteChannelTopology(queue);
        rabbit.close();
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    /** Starts the channel on {@link #queue} with these settings over the common ones, consuming into {@code subscriber}. */
    private void start(Subscriber<Message<?>> subscriber, String... keyValues) throws Exception {
        Map<String, String> props = new HashMap<>(Map.of("channel-name", "delay-unit", "queue.name", queue, "host", "127.0.0.1",
                "retry-multiplier", "1", "drain-timeout", "2s", "network-recovery-interval", "500ms"));
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        channel = new InboundChannel(TestChannelConfig.of(props, ChannelConfig.Direction.INCOMING).incoming(),
                resources, new Handover(), () -> MessageTracing.NONE, () -> DeadLetterListener.NONE);
        channel.subscribe(subscriber);
        channel.start();
        await("the consumer", LIMIT, this::consumers, n -> n == 1);
    }

    private int consumers() {
        try {
            return rabbit.consumers(queue);
        } catch (Exception e) {
            return -1; // not declared yet
        }
    }

    /** This test's delay queues, as the broker lists them. */
    private List<String> delayQueues() throws Exception {
        return Arrays.stream(TestRabbit.rabbitmqctl("-q", "list_queues", "name").split("\n")).map(String::trim)
                .filter(n -> n.startsWith(queue + DelayQueueNames.INFIX)).toList();
    }

    /** The delay queue, among those for {@code millis}, that holds a copy ready; else {@code null}. */
    private String waitingCopy(long... millis) {
        for (long ms : millis) {
            String q = DelayQueueNames.name(queue, Duration.ofMillis(ms));
            try {
                if (rabbit.ready(q) == 1) {
                    return q;
                }
            } catch (Exception e) {
                // not declared
            }
        }
        return null;
    }

    /** {@code rabbitmqctl}'s JSON lists each argument as {@code ["name","type",value]}. */
    private static void assertArgument(String arguments, String name, String jsonValue) {
        assertTrue(arguments.matches(".*\\[\"" + Pattern.quote(name) + "\",\"[a-z]+\"," + Pattern.quote(jsonValue) + "].*"),
                name + " = " + jsonValue + " in " + arguments);
    }

    private static IncomingRabbitMetadata metadata(Message<?> m) {
        return m.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
    }

    /**
     * A failure with a backoff over retry-broker-delay-above: the copy waits in a delay queue (the
     * original acked, its prefetch slot free), the broker returns it after the delay with x-death
     * added, and the attempt count, original exchange and routing key come through; at max-attempts
     * the message is dead-lettered with its reason.
     */
    @Test
    void aFailureWaitsInADelayQueueAndComesBackAsTheNextAttempt() throws Exception {
        // Backoff 2 to 4 s (equal jitter), all of it held by the broker.
        start(probe, "retry-delay", "4s", "retry-broker-delay-above", "1s", "max-attempts", "3", "prefetch", "5");
        probe.request(10);
        rabbit.bind(queue, "amq.direct", queue);
        rabbit.publish("amq.direct", queue, "failing");
        Message<?> first = probe.next();
        assertEquals(1, metadata(first).attempt());
        long nackedAt = System.nanoTime();
        first.nack(new IllegalStateException("boom 1"));

        // Asked over AMQP, not rabbitmqctl: the copy is back within 4 s.
        String delayQueue = await("the copy in its delay queue", LIMIT, () -> waitingCopy(2_000, 3_000, 4_000), q -> q != null);
        Delivery original = ((IncomingRabbitMessage<?>) first).delivery();
        await("the original acked (its prefetch slot free) while the copy waits", LIMIT, original::isSettled, acked -> acked);
        assertEquals(1, rabbit.ready(delayQueue), "still waiting");
        long delayMillis = Long.parseLong(delayQueue.substring((queue + DelayQueueNames.INFIX).length()));
        String args = TestRabbit.queueArguments(delayQueue);
        assertArgument(args, "x-message-ttl", Long.toString(delayMillis));
        assertArgument(args, "x-dead-letter-exchange", "\"\"");
        assertArgument(args, "x-dead-letter-routing-key", "\"" + queue + "\"");
        assertFalse(args.contains("x-expires"), "never deleted by expiry, with copies in it: " + args);
        assertFalse(args.contains("x-queue-type"), args);
        assertEquals(List.of(delayQueue), delayQueues(), "one delay queue");

        Message<?> second = probe.next();
        assertTrue(System.nanoTime() - nackedAt >= Duration.ofMillis(delayMillis).toNanos(), "returned before its delay");
        IncomingRabbitMetadata m2 = metadata(second);
        assertEquals(2, m2.attempt());
        assertEquals("amq.direct", m2.exchange(), "the original exchange, from the signed copy");
        assertEquals(queue, m2.routingKey());
        assertNotNull(m2.headers().get("x-death"), "the broker's dead-lettering record, neither trusted nor in the way");
        second.nack(new IllegalStateException("boom 2"));

        Message<?> third = probe.next();
        IncomingRabbitMetadata m3 = metadata(third);
        assertEquals(3, m3.attempt());
        // Each copy starts without the previous pass's x-death: one entry, counted once.
        List<?> deaths = (List<?>) m3.headers().get("x-death");
        assertEquals(1, deaths.size(), deaths.toString());
        assertEquals(1L, ((Number) ((Map<?, ?>) deaths.get(0)).get("count")).longValue(), deaths.toString());
        third.nack(new IllegalStateException("boom 3"));

        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        GetResponse dead = rabbit.drain(queue + ".dlq").get(0);
        Map<String, Object> h = dead.getProps().getHeaders();
        assertEquals("FAILED", h.get(RabbitHeaders.OUTCOME).toString());
        assertEquals(3, ((Number) h.get(RabbitHeaders.ATTEMPTS)).intValue());
        assertEquals("java.lang.IllegalStateException: boom 3", h.get(RabbitHeaders.REASON).toString());
        assertEquals(0, TestRabbit.total(queue));
    }

    /** A quorum queue's delay queue is a quorum queue too, returning copies at least once. */
    @Test
    void aQuorumQueuesDelayQueueIsAQuorumQueueThatDeadLettersAtLeastOnce() throws Exception {
        start(probe, "queue.type", "quorum", "retry-delay", "4s", "retry-broker-delay-above", "1s", "max-attempts", "2");
        probe.request(10);
        rabbit.publish("", queue, "failing");
        probe.next().nack(new IllegalStateException("boom"));
        String delayQueue = await("the delay queue", LIMIT, this::delayQueues, l -> !l.isEmpty()).get(0);
        String args = TestRabbit.queueArguments(delayQueue);
        assertArgument(args, "x-queue-type", "\"quorum\"");
        assertArgument(args, "x-dead-letter-strategy", "\"at-least-once\"");
        assertArgument(args, "x-overflow", "\"reject-publish\"");

        Message<?> second = probe.next();
        assertEquals(2, metadata(second).attempt());
        second.nack(new IllegalStateException("boom"));
        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        assertEquals(2, ((Number) rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders().get(RabbitHeaders.ATTEMPTS)).intValue());
    }

    /**
     * declare=false and no delay queue declared by an operator: the connector does not create one; it
     * says so and holds the failed delivery itself, so the retry still happens.
     */
    @Test
    void withoutDeclaringAMissingDelayQueueLeavesTheDelayToTheConsumer() throws Exception {
        rabbit.declareQuorumQueue(queue);
        try (LogCapture log = new LogCapture()) {
            start(probe, "queue.type", "quorum", "declare", "false", "retry-delay", "4s", "retry-broker-delay-above", "1s",
                    "max-attempts", "3");
            probe.request(10);
            rabbit.publish("", queue, "failing");
            probe.next().nack(new IllegalStateException("boom"));
            Message<?> second = probe.next();
            assertEquals(2, metadata(second).attempt());
            assertTrue(log.contains("ONCE0520W"), log.lines().toString());
            assertEquals(List.of(), delayQueues());
            second.ack();
        }
    }

    /**
     * The point of delay queues: 1,000 messages whose handler always fails, with a 30 s backoff, sit
     * in front of 1,000 good ones, and the channel has 10 prefetch slots. Held unacked, the failing
     * ones would fill the slots 30 s at a time (100 rounds). Held by the broker, every good one is
     * processed before the first failing one comes back.
     */
    @Test
    void failingMessagesInDelayQueuesDoNotHoldUpGoodOnes() throws Exception {
        int each = 1_000;
        AtomicInteger good = new AtomicInteger();
        AtomicInteger failedFirstAttempts = new AtomicInteger();
        AtomicInteger goodBeforeFirstReturn = new AtomicInteger(-1);
        AtomicInteger failedBeforeFirstReturn = new AtomicInteger(-1);
        // The application: fails every "bad" message, processes every "good" one, on the delivery's thread.
        InboundChannelTest.Probe handler = new InboundChannelTest.Probe() {
            @Override
            public void onNext(Message<?> m) {
                if (m.getPayload().toString().startsWith("good")) {
                    good.incrementAndGet();
                    m.ack();
                    return;
                }
                if (metadata(m).attempt() == 1) {
                    failedFirstAttempts.incrementAndGet();
                } else if (goodBeforeFirstReturn.compareAndSet(-1, good.get())) {
                    failedBeforeFirstReturn.set(failedFirstAttempts.get());
                }
                m.nack(new IllegalStateException("always fails"));
            }
        };
        start(handler, "retry-delay", "30s", "prefetch", "10", "max-attempts", "5");
        for (int i = 0; i < each; i++) {
            rabbit.publish("", queue, "bad-" + i);
        }
        for (int i = 0; i < each; i++) {
            rabbit.publish("", queue, "good-" + i);
        }
        long started = System.nanoTime();
        handler.request(Long.MAX_VALUE);

        await("every good message processed", Duration.ofSeconds(45), good::get, n -> n == each);
        long goodDoneMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
        await("the first failing message back", Duration.ofSeconds(45), goodBeforeFirstReturn::get, n -> n >= 0);
        long firstReturnMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
        assertEquals(each, goodBeforeFirstReturn.get(), "good messages processed when the first failing one came back");
        assertEquals(each, failedBeforeFirstReturn.get(), "failing messages tried once when the first came back");
        System.out.printf("%d failing + %d good messages, prefetch 10: all good ones processed after %d ms, first failing "
                + "one back after %d ms%n", each, each, goodDoneMillis, firstReturnMillis);
    }
}
