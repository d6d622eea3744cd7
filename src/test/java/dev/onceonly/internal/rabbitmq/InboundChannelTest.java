// Over 300 lines: every settle path runs on one fixture, a channel consuming a queue of the machine's RabbitMQ.
package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.GetResponse;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.observability.DeadLetterMetrics;
import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.TestRabbit;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An incoming channel outside any server, against the machine's RabbitMQ: the broker protocol
 * details that the Liberty tests only show indirectly.
 */
class InboundChannelTest {

    static final Duration LIMIT = Duration.ofSeconds(20);
    /** The keys of a rotation of copy-signing-key: at least 32 bytes each, as every key must be. */
    private static final String OLD_KEY = "old-copy-signing-key-0123456789ab";
    private static final String NEW_KEY = "new-copy-signing-key-0123456789ab";

    final String queue = "onceonly.unit." + UUID.randomUUID();
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final Probe probe = new Probe();
    final Handover handover = new Handover();
    /** The channel's dead letters go to the OpenTelemetry counter observability makes of them, read in memory. */
    final InMemoryMetricReader metrics = InMemoryMetricReader.create();
    final SdkMeterProvider meters = SdkMeterProvider.builder().registerMetricReader(metrics).build();
    final DeadLetterMetrics deadLetterMetrics = new DeadLetterMetrics(meters.get("onceonly"));
    TestRabbit rabbit;
    InboundChannel channel;

    @BeforeEach
    void connect(TestInfo test) throws Exception {
        rabbit = new TestRabbit();
        // The stale-delivery test needs time to drop the connection while a retry is held: two
        // rabbitmqctl runs, which take seconds on a loaded machine. Jitter holds a first failure for
        // 8 to 16 s there, all of it in the consumer (below retry-broker-delay-above).
        boolean stale = test.getTestMethod().orElseThrow().getName().contains("Stale");
        String retryDelay = stale ? "16s" : "100ms";
        String testName = test.getTestMethod().orElseThrow().getName();
        // The quorum tests run on a quorum queue; the undeclared one on a quorum queue configured as classic.
        String queueType = testName.contains("Quorum") && !testName.contains("Undeclared") ? "quorum" : "classic";
        boolean declare = !testName.contains("Undeclared");
        if (!declare) {
            rabbit.declareQuorumQueue(queue);
        }
        Map<String, String> props = testName.contains("SmallRye")
                // Written for SmallRye's RabbitMQ connector: its names for prefetch, the dead-letter exchange
                // and queue and the user, and its unit (milliseconds) for the recovery interval.
                ? Map.of("channel-name", "unit", "queue.name", queue, "host", "127.0.0.1", "max-outstanding-messages", "5",
                        "retry-delay", retryDelay, "max-attempts", "2", "network-recovery-interval", "500",
                        "dead-letter-exchange", queue + ".sr-dlx", "dead-letter-queue-name", queue + ".sr-dlq", "user", "guest")
                : Map.ofEntries(Map.entry("channel-name", "unit"), Map.entry("queue.name", queue), Map.entry("host", "127.0.0.1"),
                Map.entry("prefetch", "5"), Map.entry("retry-delay", retryDelay), Map.entry("max-attempts", "2"),
                Map.entry("drain-timeout", "5s"), Map.entry("queue.type", queueType), Map.entry("network-recovery-interval", "500ms"),
                Map.entry("declare", Boolean.toString(declare)), Map.entry("retry-broker-delay-above", stale ? "1m" : "5s"),
                Map.entry("claim-ahead", testName.contains("ClaimAhead") ? "4" : "0"));
        if (testName.contains("Batch")) {
            props = new HashMap<>(props);
            props.put("batch", "true");
            props.put("batch-size", "4");
            props.put("batch-linger", "300ms");
        }
        if (testName.contains("Rotation")) {
            // After a rolling restart that changed the key from OLD_KEY to NEW_KEY.
            props = new HashMap<>(props);
            props.put("copy-signing-key", NEW_KEY);
            props.put("copy-signing-previous-keys", OLD_KEY);
        }
        channel = new InboundChannel(TestChannelConfig.of(props, ChannelConfig.Direction.INCOMING)
                .incoming(), resources, handover, () -> MessageTracing.NONE, () -> deadLetterMetrics);
        channel.subscribe(probe);
        channel.start();
        await("the consumer", LIMIT, () -> consumers(queue), n -> n == 1);
    }

    @AfterEach
    void close() throws Exception {
        channel.stopConsuming();
        channel.drainAndClose();
        rabbit.deleteChannelTopology(queue);
        rabbit.deleteQueue(queue + ".sr-dlq");
        rabbit.deleteExchange(queue + ".sr-dlx");
        rabbit.close();
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
        meters.close();
    }

    /** {@return {@code onceonly.dead.letters} of channel "unit" with this {@code reason} tag, as counted so far} */
    private long deadLetters(String reason) {
        return metrics.collectAllMetrics().stream().filter(m -> m.getName().equals("onceonly.dead.letters"))
                .flatMap(m -> m.getLongSumData().getPoints().stream())
                .filter(p -> "unit".equals(p.getAttributes().get(AttributeKey.stringKey("channel")))
                        && reason.equals(p.getAttributes().get(AttributeKey.stringKey("reason"))))
                .mapToLong(LongPointData::getValue).sum();
    }

    /** The instance part of this JVM's connection names (the connector's default: host and pid). */
    private static String channelInstance() {
        return TestChannelConfig.of(Map.of("channel-name", "unit"), ChannelConfig.Direction.INCOMING).incoming().connection().instance();
    }

    /** Several instances on one broker: each connection's name says whose it is (channel, role, host and pid). */
    @Test
    void connectionsAreNamedByChannelRoleAndInstance() throws Exception {
        String instance = "@" + ".+" + "-" + ProcessHandle.current().pid();
        List<String> mine = TestRabbit.connectionNames().stream()
                .filter(n -> n.matches("onceonly:unit:(consume|publish)" + instance)).sorted().toList();
        assertEquals(2, mine.size(), "this JVM's consume and publish connections of channel 'unit': " + TestRabbit.connectionNames());
        assertTrue(mine.get(0).startsWith("onceonly:unit:consume@") && mine.get(1).startsWith("onceonly:unit:publish@"), mine.toString());
    }

    /**
     * claim-ahead: the guard, guarding one delivery, is offered those received after it (buffered,
     * or handed over and queued by Reactive Messaging) that hold no claim (up to claim-ahead − 1), and
     * each claim it leaves with a delivery is abandoned when that delivery is settled, whether the
     * guard used it (acked) or not (requeued at stop).
     */
    @Test
    void deliveriesReceivedBehindOneAreOfferedForClaimAheadAndAbandonedWhenSettled() throws Exception {
        List<String> abandoned = new CopyOnWriteArrayList<>();
        for (int i = 1; i <= 5; i++) {
            rabbit.publish("", queue, "m" + i);
        }
        probe.request(5);
        List<Message<?>> handed = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            handed.add(probe.next());
        }
        Dispatch first = handover.take(handed.get(0).getPayload());

        List<? extends ClaimAheadSlot> behind = first.claimAhead().behind();

        assertEquals(List.of("m2", "m3", "m4"), behind.stream().map(InboundChannelTest::body).toList(),
                "those received after it, at most claim-ahead - 1 (claim-ahead 4)");
        first.claimAhead().hold(() -> abandoned.add("m1"));
        behind.forEach(d -> d.hold(() -> abandoned.add(body(d))));
        assertEquals(List.of("m5"), handover.take(handed.get(1).getPayload()).claimAhead().behind().stream().map(InboundChannelTest::body).toList(),
                "deliveries holding a claim are not offered again");

        handed.get(0).ack().toCompletableFuture().get(20, TimeUnit.SECONDS);
        assertEquals(List.of("m1"), abandoned, "m1 settled (acked): its claim is given back to the guard, which used it");
        channel.stopConsuming();
        channel.drainAndClose(); // m2 to m5 were never acked: requeued after the drain timeout
        assertEquals(List.of("m1", "m2", "m3", "m4"), abandoned.stream().sorted().toList(),
                "the claims of requeued deliveries are abandoned (released); m5 held none");
    }

    private static String body(ClaimAheadSlot d) {
        return new String(d.message().body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void acksAndNacksAfterTheFirstAreIgnored() throws Exception {
        probe.request(10);
        rabbit.publish("", queue, "one");
        rabbit.publish("", queue, "two");
        for (int i = 0; i < 2; i++) {
            Message<?> m = probe.next();
            m.ack();
            m.ack();
            m.nack(new IllegalStateException("too late"));
        }
        // A second ack of the same delivery tag would have made the broker close the channel,
        // and the consumer with it.
        rabbit.publish("", queue, "three");
        probe.next().ack();
        await("every message acked", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        assertEquals(1, consumers(queue));
        assertEquals(0, TestRabbit.total(queue + ".dlq"));
    }

    /**
     * A dead letter the exchange cannot route is held and published again after the retry delay,
     * never handed to the handler again; once routable, it lands, counted once.
     */
    @Test
    void deadLetterThatCannotBeRoutedIsPublishedAgainNotLost() throws Exception {
        probe.request(10);
        rabbit.unbind(queue + ".dlq", queue + ".dlx", queue);
        rabbit.publish("", queue, "rejected");
        try (dev.onceonly.testing.LogCapture log = new dev.onceonly.testing.LogCapture()) {
            refuse(probe.next(), Outcome.REJECTED);
            await("the dead letter returned unroutable", LIMIT, () -> log.lines("ONCE0506W").size(), n -> n >= 1);
        }
        rabbit.bind(queue + ".dlq", queue + ".dlx", queue);

        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        GetResponse dead = rabbit.drain(queue + ".dlq").get(0);
        assertEquals("REJECTED", dead.getProps().getHeaders().get(RabbitHeaders.OUTCOME).toString());
        assertEquals("unit-consumer", dead.getProps().getHeaders().get(RabbitHeaders.CONSUMER).toString());
        assertEquals(0, handover.pending(), "settled deliveries leave the handover");
        await("the dead letter counted", LIMIT, () -> deadLetters("rejected"), n -> n >= 1);
        assertEquals(1, deadLetters("rejected"), "counted once: the publish the broker returned is not a dead letter");
        assertTrue(probe.received.isEmpty(), "never handed to the handler again: " + probe.received);
    }

    /**
     * Acts as the guard of the method invoked for {@code m}: takes the delivery from the handover
     * by its payload, reports the decision to it, then nacks as Reactive Messaging would with the
     * guard's exception.
     */
    private void refuse(Message<?> m, Outcome outcome) {
        Dispatch dispatch = handover.take(m.getPayload());
        assertNotNull(dispatch, "the delivery was posted under its payload");
        dispatch.decided(new GuardEvent("unit-consumer", outcome, Layer.NONE, "", "no key", 0));
        m.nack(new MessageRefusedException(outcome, "unit-consumer", "", "no key", null));
    }

    /**
     * A guarded {@code @Incoming} method returns quietly after a refusal (so Reactive Messaging logs
     * no error) and Reactive Messaging acks: the delivery is settled as the refusal says, never
     * acked. BUSY comes back (not an attempt), REJECTED goes to the dead-letter queue.
     */
    @Test
    void anAckAfterARefusalSettlesAsTheRefusal() throws Exception {
        probe.request(10);
        rabbit.publish("", queue, "busy-then-rejected");
        Message<?> first = probe.next();
        Dispatch dispatch = handover.take(first.getPayload());
        assertTrue(dispatch.settlesFromDecision());
        dispatch.decided(new GuardEvent("unit-consumer", Outcome.BUSY, Layer.CLAIM_STORE, "", "another holder", 0));
        first.ack();

        Message<?> again = probe.next();
        assertEquals("busy-then-rejected", again.getPayload());
        assertEquals(1, again.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt(), "a BUSY requeue is not an attempt");
        handover.take(again.getPayload()).decided(new GuardEvent("unit-consumer", Outcome.REJECTED, Layer.NONE, "", "no key", 0));
        again.ack();

        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        assertEquals("REJECTED", rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders().get(RabbitHeaders.OUTCOME).toString());
    }

    /**
     * batch=true: up to batch-size buffered deliveries are handed over as one message whose payload
     * is the list of theirs, their deliveries posted under that list; its ack settles each delivery
     * by its own decision. A partial batch is handed over once it lingered.
     */
    @Test
    void aBatchIsHandedOverWholeAndEachDeliverySettledByItsOwnDecision() throws Exception {
        for (String body : List.of("processed", "duplicate", "rejected", "busy", "fifth")) {
            rabbit.publish("", queue, body);
        }
        await("five deliveries buffered", LIMIT, () -> channel.unsettledCount(), n -> n == 5);
        probe.request(10);

        Message<?> batch = probe.next();
        assertEquals(List.of("processed", "duplicate", "rejected", "busy"), batch.getPayload());
        List<? extends Dispatch> deliveries = handover.takeBatch(batch.getPayload());
        assertEquals(4, deliveries.size(), "each delivery posted under the list");
        Outcome[] decided = {Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.REJECTED, Outcome.BUSY};
        for (int i = 0; i < decided.length; i++) {
            assertTrue(deliveries.get(i).settlesFromDecision());
            deliveries.get(i).decided(new GuardEvent("unit-consumer", decided[i], Layer.NONE, "", "decided", 0), null);
        }
        batch.ack();

        // The fifth lingers, then goes alone or with the BUSY one, which came back after its hold.
        List<Object> rest = new ArrayList<>();
        while (rest.size() < 2) {
            Message<?> partial = probe.next();
            List<?> payloads = (List<?>) partial.getPayload();
            assertTrue(payloads.size() <= 2, "a partial batch: " + payloads);
            rest.addAll(payloads);
            partial.ack(); // no guarded method took them: acked
        }
        assertEquals(List.of("busy", "fifth"), rest.stream().map(Object::toString).sorted().toList());
        Message<?> none = probe.received.poll(1, TimeUnit.SECONDS);
        assertNull(none, "nothing else comes");

        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        assertEquals("rejected", new String(rabbit.drain(queue + ".dlq").get(0).getBody(), StandardCharsets.UTF_8));
        assertEquals(0, handover.pending(), "settled batches and deliveries leave the handover");
    }

    /** A channel configured with SmallRye's names starts, consumes, and dead-letters where those names say. */
    @Test
    void aSmallRyeStyleConfigurationConsumesAndDeadLetters() throws Exception {
        probe.request(10);
        rabbit.publish("", queue, "good");
        probe.next().ack();
        rabbit.publish("", queue, "bad");
        probe.next().nack(new IllegalStateException("boom"));
        probe.next().nack(new IllegalStateException("boom again"));
        await("the dead letter in dead-letter-queue-name", LIMIT, () -> TestRabbit.total(queue + ".sr-dlq"), n -> n == 1);
        assertEquals(0, TestRabbit.total(queue));
        assertEquals("bad", new String(rabbit.drain(queue + ".sr-dlq").get(0).getBody(), StandardCharsets.UTF_8));
    }

    /** A refusal nobody reported for this delivery is a failure of it: an attempt, then the DLQ. */
    @Test
    void aRefusalThrownWithoutAGuardDecisionCountsAsAFailedAttempt() throws Exception {
        probe.request(10);
        rabbit.publish("", queue, "inner-busy");
        probe.next().nack(new MessageRefusedException(Outcome.BUSY, "inner", "", "busy", null));
        Message<?> second = probe.next();
        assertEquals(2, second.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt());
        second.nack(new MessageRefusedException(Outcome.BUSY, "inner", "", "busy", null));
        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        assertEquals("FAILED", rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders().get(RabbitHeaders.OUTCOME).toString());
    }

    /**
     * The guard reported FAILED and not worth retrying (the consumer's no-retry-for): the connector
     * dead-letters the first attempt at once (max-attempts is 2 here) instead of delivering it again.
     */
    @Test
    void aFailureNotWorthRetryingIsDeadLetteredAtItsFirstAttempt() throws Exception {
        probe.request(10);
        rabbit.publish("", queue, "{\"quantity\":\"abc\"}");
        Message<?> first = probe.next();
        assertEquals(1, first.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt());
        Dispatch dispatch = handover.take(first.getPayload());
        assertNotNull(dispatch, "the delivery was posted under its payload");
        dispatch.decided(new GuardEvent("unit-consumer", Outcome.FAILED, Layer.NONE, "digest",
                "not retried: java.lang.NumberFormatException matches no-retry-for java.lang.IllegalArgumentException", 0, false));
        first.nack(new NumberFormatException("For input string: \"abc\""));

        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        Map<String, Object> h = rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders();
        assertEquals("FAILED", h.get(RabbitHeaders.OUTCOME).toString());
        assertEquals(1, ((Number) h.get(RabbitHeaders.ATTEMPTS)).intValue(), "dead-lettered at its first attempt");
        assertEquals("java.lang.NumberFormatException: For input string: \"abc\" (not retried: java.lang.NumberFormatException "
                + "matches no-retry-for java.lang.IllegalArgumentException)", h.get(RabbitHeaders.REASON).toString());
        assertNull(probe.received.poll(1, TimeUnit.SECONDS), "not delivered again");
        assertEquals(1, deadLetters("not-retryable"), "counted as not retryable");
        assertEquals(0, deadLetters("max-attempts"));
    }

    /**
     * The guarded method returned after its handler failed (so that Reactive Messaging does not log
     * it): the ack of a delivery holding a FAILED decision is a failed attempt, never an ack. One
     * line for the attempt tried again, naming the exception's class only; the last attempt is the
     * dead letter's line, with the stack trace, once; the dead letter's header keeps the message.
     */
    @Test
    void anAckAfterAFailureIsAFailedAttemptLoggedOnceAndDeadLetteredWithItsTraceAtTheLast() throws Exception {
        probe.request(10);
        try (LogCapture log = new LogCapture()) {
            rabbit.publish("", queue, "failing-quietly");
            Message<?> first = probe.next();
            handover.take(first.getPayload()).decided(failed(true), new IllegalStateException("card 4111 declined"));
            first.ack();

            Message<?> second = probe.next();
            assertEquals("failing-quietly", second.getPayload());
            assertEquals(2, second.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt(), "tried again, counted");
            List<String> attempt = log.lines("ONCE0516W");
            assertEquals(1, attempt.size(), log.lines().toString());
            assertTrue(attempt.get(0).startsWith("ONCE0516W: Handler of consumer 'unit-consumer' failed on attempt 1 of 2 (channel '"),
                    attempt.get(0));
            assertTrue(attempt.get(0).contains("key digest, body sha256 "), attempt.get(0));
            assertTrue(attempt.get(0).contains("): java.lang.IllegalStateException; next attempt in "), attempt.get(0));
            assertEquals(List.of(), log.traced(), "no trace for an attempt tried again");

            handover.take(second.getPayload()).decided(failed(true), new IllegalStateException("card 4111 declined"));
            second.ack();
            await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
            await("the queue to be empty", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
            Map<String, Object> h = rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders();
            assertEquals("FAILED", h.get(RabbitHeaders.OUTCOME).toString());
            assertEquals("java.lang.IllegalStateException: card 4111 declined", h.get(RabbitHeaders.REASON).toString());
            assertEquals(2, ((Number) h.get(RabbitHeaders.ATTEMPTS)).intValue());
            await("the dead letter's line", LIMIT, () -> log.lines("ONCE0505W").size(), n -> n == 1);
            assertEquals(1, log.lines("ONCE0516W").size(), "the last attempt has the dead letter's line only");
            assertEquals(log.lines("ONCE0505W"), log.traced(), "its trace, once");
            assertTrue(log.lines().stream().noneMatch(l -> l.contains("4111")), "the exception's message stays out of the lines");
        }
    }

    /** Not worth retrying, acked: dead-lettered at once, its one line without a trace (an expected outcome). */
    @Test
    void anAckAfterAFailureNotWorthRetryingIsDeadLetteredAtOnceInOneLineWithoutATrace() throws Exception {
        probe.request(10);
        try (LogCapture log = new LogCapture()) {
            rabbit.publish("", queue, "invalid-quietly");
            Message<?> first = probe.next();
            handover.take(first.getPayload()).decided(failed(false), new NumberFormatException("For input string: \"abc\""));
            first.ack();

            await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
            Map<String, Object> h = rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders();
            assertEquals(1, ((Number) h.get(RabbitHeaders.ATTEMPTS)).intValue(), "dead-lettered at its first attempt");
            assertEquals("java.lang.NumberFormatException: For input string: \"abc\" (not retried: java.lang.NumberFormatException "
                    + "matches no-retry-for java.lang.IllegalArgumentException)", h.get(RabbitHeaders.REASON).toString());
            await("the dead letter's line", LIMIT, () -> log.lines("ONCE0505W").size(), n -> n == 1);
            assertTrue(log.lines("ONCE0505W").get(0).endsWith("outcome FAILED after 1 attempt(s), to exchange '" + queue + ".dlx': "
                    + "java.lang.NumberFormatException (not retried: java.lang.NumberFormatException matches no-retry-for "
                    + "java.lang.IllegalArgumentException)"), log.lines("ONCE0505W").get(0));
            assertEquals(List.of(), log.lines("ONCE0516W"), "its one line is the dead letter's");
            assertEquals(List.of(), log.traced());
            assertNull(probe.received.poll(1, TimeUnit.SECONDS), "not delivered again");
        }
    }

    private static GuardEvent failed(boolean retryable) {
        return new GuardEvent("unit-consumer", Outcome.FAILED, Layer.NONE, "digest", retryable ? "handler failed or transaction rolled back"
                : "not retried: java.lang.NumberFormatException matches no-retry-for java.lang.IllegalArgumentException", 0, retryable);
    }

    @Test
    void failedMessageOnAClassicQueueComesBackAsACountedCopy() throws Exception {
        probe.request(10);
        rabbit.bind(queue, "amq.direct", queue);
        rabbit.publish("amq.direct", queue, "failing");
        Message<?> first = probe.next();
        IncomingRabbitMetadata m1 = first.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
        assertEquals(1, m1.attempt());
        first.nack(new IllegalStateException("boom"));

        Message<?> second = probe.next();
        IncomingRabbitMetadata m2 = second.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
        assertEquals(2, m2.attempt());
        assertEquals("amq.direct", m2.exchange(), "the copy (published to the default exchange) keeps the original exchange");
        assertEquals(m1.routingKey(), m2.routingKey(), "and routing key, so its content key is the same");
        assertEquals(true, m2.redelivered());
        second.nack(new IllegalStateException("boom"));

        // max-attempts is 2: dead-lettered.
        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        GetResponse dead = rabbit.drain(queue + ".dlq").get(0);
        assertEquals(2, ((Number) dead.getProps().getHeaders().get(RabbitHeaders.ATTEMPTS)).intValue());
        assertEquals(null, dead.getProps().getHeaders().get(RabbitHeaders.RETRY_ATTEMPTS));
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        await("the dead letter counted", LIMIT, () -> deadLetters("max-attempts"), n -> n == 1);
        assertEquals(0, deadLetters("not-retryable"), "counted under its one reason");
    }

    @Test
    void stopRequeuesWhatWasNotHandedOverAndWaitsForWhatWas() throws Exception {
        probe.request(1);
        for (int i = 0; i < 5; i++) {
            rabbit.publish("", queue, "m" + i);
        }
        Message<?> inProgress = probe.next();
        await("all five delivered (prefetch 5)", LIMIT, () -> rabbit.ready(queue), n -> n == 0);

        channel.stopConsuming();
        resources.scheduler().schedule(() -> inProgress.ack(), 300, TimeUnit.MILLISECONDS);
        channel.drainAndClose();

        assertEquals(4, rabbit.ready(queue), "the four never handed over are back, the one in progress was acked");
        assertEquals(0, probe.received.size());
    }

    /**
     * A failed delivery is held for its retry; meanwhile the consuming connection drops and the
     * broker takes the delivery back. The held retry must then publish nothing: the broker
     * redelivers the original, and a copy would start a second retry chain.
     */
    @Test
    void aHeldRetryOfAStaleDeliveryPublishesNothing() throws Exception {
        probe.request(10);
        rabbit.publish("", queue, "stale");
        probe.next().nack(new IllegalStateException("boom")); // held for 8 to 16 s, then a counted copy
        // This JVM's connection: another build's tests may run a channel named 'unit' on the same broker.
        TestRabbit.closeConnection("onceonly:unit:consume@" + channelInstance());
        Message<?> again = probe.next();
        IncomingRabbitMetadata m = again.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
        assertEquals(1, m.attempt(), "the original, redelivered by the broker");
        assertTrue(m.redelivered());
        // Past the hold (at most 16 s from the nack): no copy arrives.
        assertNull(probe.received.poll(17, TimeUnit.SECONDS), "a retry copy of the stale delivery was published");
        again.ack();
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
    }

    /**
     * On a quorum queue a requeue raises x-delivery-count. BUSY must not spend the attempt budget:
     * before, five BUSY refusals made the next real failure dead-letter at once (attempt 6 of 2),
     * and RabbitMQ 4 would drop a message that stayed BUSY for 20 returns.
     */
    @Test
    void busyOnAQuorumQueueIsNotAnAttempt() throws Exception {
        assertTrue(TestRabbit.queueArguments(queue).contains("\"x-delivery-limit\""), TestRabbit.queueArguments(queue));
        assertTrue(TestRabbit.queueArguments(queue).contains("\"x-dead-letter-exchange\""), TestRabbit.queueArguments(queue));
        probe.request(100);
        rabbit.publish("", queue, "contended");
        for (int i = 0; i < 5; i++) {
            Message<?> m = probe.next();
            assertEquals(1, m.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt(), "BUSY #" + i + " counted");
            refuse(m, Outcome.BUSY);
        }
        Message<?> first = probe.next();
        assertEquals(1, first.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt());
        first.nack(new IllegalStateException("boom")); // a real failure: attempt 1 of 2
        Message<?> second = probe.next();
        IncomingRabbitMetadata m2 = second.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
        assertEquals(2, m2.attempt());
        assertEquals("", m2.exchange(), "published to the default exchange originally");
        second.nack(new IllegalStateException("boom"));
        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        assertEquals(2, ((Number) rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders().get(RabbitHeaders.ATTEMPTS)).intValue());
    }

    /**
     * Anyone who may publish to the default exchange could forge a "retry copy": its attempt count
     * (dead-letter on the first failure) and its original exchange and routing key (take the content
     * key of a future genuine message). Before, the forged values were believed (attempt 6, exchange
     * 'orders'); now it never reaches the application and is dead-lettered with the reason. A
     * publisher's x-delivery-count on a classic queue counts nothing either.
     */
    @Test
    void forgedRetryHeadersAreNotBelieved() throws Exception {
        probe.request(10);
        Map<String, Object> forged = Map.of(RabbitHeaders.RETRY_ATTEMPTS, 5, RabbitHeaders.ORIGINAL_EXCHANGE, "orders",
                RabbitHeaders.ORIGINAL_ROUTING_KEY, "order.placed", RabbitHeaders.SIGNATURE, "made-up");
        rabbit.publish("", queue, new com.rabbitmq.client.AMQP.BasicProperties.Builder().headers(forged).build(), "forged");
        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        GetResponse dead = rabbit.drain(queue + ".dlq").get(0);
        assertEquals("REJECTED", dead.getProps().getHeaders().get(RabbitHeaders.OUTCOME).toString());
        assertTrue(dead.getProps().getHeaders().get(RabbitHeaders.REASON).toString().contains("signature"));
        await("the dead letter counted", LIMIT, () -> deadLetters("unsigned-copy"), n -> n == 1);
        assertEquals(0, deadLetters("rejected"), "not counted as the guard's REJECTED");

        rabbit.publish("", queue, new com.rabbitmq.client.AMQP.BasicProperties.Builder()
                .headers(Map.of(RabbitHeaders.DELIVERY_COUNT, 7)).build(), "counted-by-nobody");
        Message<?> m = probe.next();
        assertEquals("counted-by-nobody", m.getPayload(), "the forged copy never reached the application");
        assertEquals(1, m.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt());
        m.ack();
    }

    /**
     * A retry copy signed before a rolling restart changed copy-signing-key (a retry in flight, a copy
     * back from a delay queue) is the connector's own: with the old key in copy-signing-previous-keys
     * it is processed as the attempt it is, with its original exchange and routing key. Before, it was
     * dead-lettered as REJECTED, unprocessed. One signed with a key not listed still is.
     */
    @Test
    void aRetryCopySignedBeforeAKeyRotationIsProcessed() throws Exception {
        probe.request(10);
        byte[] body = "before-rotation".getBytes(StandardCharsets.UTF_8);
        rabbit.publish("", queue, new com.rabbitmq.client.AMQP.BasicProperties.Builder().headers(Map.of(
                RabbitHeaders.RETRY_ATTEMPTS, 1, RabbitHeaders.ORIGINAL_EXCHANGE, "orders",
                RabbitHeaders.ORIGINAL_ROUTING_KEY, "order.placed", RabbitHeaders.SIGNATURE,
                signer(OLD_KEY).sign(queue, 1, "orders", "order.placed", body))).build(), "before-rotation");
        Message<?> m = probe.next();
        IncomingRabbitMetadata meta = m.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
        assertEquals("before-rotation", m.getPayload());
        assertEquals(2, meta.attempt());
        assertEquals("orders", meta.exchange());
        assertEquals("order.placed", meta.routingKey());
        m.ack();

        rabbit.publish("", queue, new com.rabbitmq.client.AMQP.BasicProperties.Builder().headers(Map.of(
                RabbitHeaders.RETRY_ATTEMPTS, 1, RabbitHeaders.ORIGINAL_EXCHANGE, "orders",
                RabbitHeaders.ORIGINAL_ROUTING_KEY, "order.placed", RabbitHeaders.SIGNATURE,
                signer("unlisted-copy-signing-key-0123456789").sign(queue, 1, "orders", "order.placed", body))).build(), "before-rotation");
        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        assertEquals("REJECTED", rabbit.drain(queue + ".dlq").get(0).getProps().getHeaders().get(RabbitHeaders.OUTCOME).toString());
    }

    /** The signer of this test's queue with {@code key} as its copy-signing-key. */
    private CopySignature signer(String key) {
        return CopySignature.of(TestChannelConfig.of(Map.of("channel-name", "unit", "queue.name", queue, "copy-signing-key", key),
                ChannelConfig.Direction.INCOMING).incoming());
    }

    /** A long-string header that is not valid UTF-8 keeps its exact bytes (its toString() replaced them). */
    @Test
    void longStringHeadersThatAreNotUtf8KeepTheirBytes() throws Exception {
        probe.request(10);
        byte[] invalid = {(byte) 0xff, (byte) 0xfe, 'k'};
        rabbit.publish("", queue, new com.rabbitmq.client.AMQP.BasicProperties.Builder().headers(Map.of(
                "bin", com.rabbitmq.client.impl.LongStringHelper.asLongString(invalid),
                "text", com.rabbitmq.client.impl.LongStringHelper.asLongString("order-1"))).build(), "h");
        Message<?> m = probe.next();
        Map<String, Object> headers = m.getMetadata(IncomingRabbitMetadata.class).orElseThrow().headers();
        assertArrayEquals(invalid, (byte[]) headers.get("bin"));
        assertEquals("order-1", headers.get("text"));
        m.ack();
    }

    /**
     * The broker closes the consuming AMQP channel (here: an ack of an unknown delivery tag, 406;
     * likewise an ack timeout) while the connection stays open. amqp-client does not recover such a
     * channel: before, the channel never consumed again and readiness stayed UP.
     */
    @Test
    void aConsumingChannelClosedByTheBrokerConsumesAgain() throws Exception {
        probe.request(10);
        rabbit.publish("", queue, "in-flight");
        Message<?> inFlight = probe.next();
        ((IncomingRabbitMessage<?>) inFlight).delivery().channel.basicAck(999_999, false);
        await("readiness DOWN", LIMIT, () -> channel.connected(), up -> !up);
        await("readiness UP again", LIMIT, () -> channel.connected(), up -> up);
        Message<?> again = probe.next();
        assertEquals("in-flight", again.getPayload(), "the broker gave the unacked delivery back");
        again.ack();
        rabbit.publish("", queue, "after");
        Message<?> after = probe.next();
        assertEquals("after", after.getPayload());
        after.ack();
    }

    /** The queue is deleted under the consumer (basic.cancel): it is declared again and consumed. */
    @Test
    void aConsumerCancelledByTheBrokerConsumesAgain() throws Exception {
        probe.request(10);
        rabbit.deleteQueue(queue);
        await("the queue declared and consumed again", LIMIT, () -> consumers(queue), n -> n == 1);
        rabbit.publish("", queue, "after-cancel");
        Message<?> m = probe.next();
        assertEquals("after-cancel", m.getPayload());
        m.ack();
    }

    /**
     * A dead-letter publish to an exchange that does not exist makes the broker close the publishing
     * AMQP channel (404). Before, every later retry and dead letter failed on the closed channel and
     * the message looped forever; now the next publish opens a new channel, and the dead letter held
     * meanwhile lands once the exchange is back.
     */
    @Test
    void aPublishChannelClosedByTheBrokerIsReopened() throws Exception {
        probe.request(10);
        rabbit.deleteExchange(queue + ".dlx");
        rabbit.publish("", queue, "poison");
        try (dev.onceonly.testing.LogCapture log = new dev.onceonly.testing.LogCapture()) {
            refuse(probe.next(), Outcome.REJECTED); // the dead-letter publish fails: held, published again
            await("the dead-letter publish refused", LIMIT, () -> log.lines("ONCE0506W").size(), n -> n >= 1);
        }
        com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
        f.setHost("127.0.0.1");
        try (var c = f.newConnection(); var ch = c.createChannel()) {
            ch.exchangeDeclare(queue + ".dlx", "fanout", true);
            ch.queueBind(queue + ".dlq", queue + ".dlx", queue);
        }
        await("the dead letter", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 1);
        assertTrue(probe.received.isEmpty(), "never handed to the handler again: " + probe.received);
    }

    /**
     * declare=false and queue.type left at classic while the queue is a quorum queue: plain requeues
     * of BUSY deliveries raised x-delivery-count towards the broker's delivery limit (RabbitMQ 4
     * drops at 20). The connector now notices the broker's count and sends BUSY back as copies.
     */
    @Test
    void anUndeclaredQuorumQueueConfiguredAsClassicIsFoundOut() throws Exception {
        probe.request(100);
        rabbit.publish("", queue, "busy");
        try (dev.onceonly.testing.LogCapture log = new dev.onceonly.testing.LogCapture()) {
            for (int i = 0; i < 4; i++) {
                Message<?> m = probe.next();
                Object count = m.getMetadata(IncomingRabbitMetadata.class).orElseThrow().headers().get(RabbitHeaders.DELIVERY_COUNT);
                assertTrue(count == null || ((Number) count).intValue() <= 1, "BUSY #" + i + " counted by the broker: " + count);
                refuse(m, Outcome.BUSY);
            }
            assertTrue(log.contains("ONCE0514W"), log.lines().toString());
        }
        probe.next().ack();
    }

    private int consumers(String q) {
        try {
            return rabbit.consumers(q);
        } catch (Exception e) {
            return -1;
        }
    }

    /** A Reactive Streams subscriber the test drives by hand. */
    static class Probe implements Subscriber<Message<?>> {
        final BlockingQueue<Message<?>> received = new LinkedBlockingQueue<>();
        volatile Subscription subscription;

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
        }

        void request(long n) {
            subscription.request(n);
        }

        Message<?> next() throws InterruptedException {
            Message<?> m = received.poll(LIMIT.toSeconds(), TimeUnit.SECONDS);
            assertNotNull(m, "no message delivered");
            return m;
        }

        @Override
        public void onNext(Message<?> m) {
            received.add(m);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
    }

}
