package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmCallback;
import com.rabbitmq.client.Connection;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.DrainedScheduler;
import dev.onceonly.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Retry copies, give-backs and dead letters without a broker: what each copy is published with,
 * that the original is acked only on the broker's confirm, and what a refused publish leaves (a
 * requeue, or on a queue where a requeue counts, the same publish again after the retry delay). The
 * AMQP side is a channel in memory whose confirms the test sends; held deliveries wait on a
 * {@link DrainedScheduler} until the test runs them.
 */
class RedeliveryTest {

    /** Broker actions on the consuming channel, as "ack 1" or "nack 1 requeue=true". */
    private final List<String> settled = new CopyOnWriteArrayList<>();
    private final List<Published> published = new ArrayList<>();
    private final List<String> declared = new ArrayList<>();
    private ConfirmCallback confirm;
    private ConfirmCallback refuse;
    private long nextSeq = 1;
    private boolean declareFails;
    private boolean requeueCounts;

    private final Channel consuming = (Channel) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Channel.class},
            (proxy, method, args) -> {
                switch (method.getName()) {
                    case "basicAck" -> settled.add("ack " + args[0]);
                    case "basicNack" -> settled.add("nack " + args[0] + " requeue=" + args[2]);
                    default -> throw new UnsupportedOperationException(method.getName());
                }
                return null;
            });
    private final Channel publishing = (Channel) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Channel.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "confirmSelect", "addReturnListener", "addShutdownListener", "close" -> null;
                case "addConfirmListener" -> {
                    confirm = (ConfirmCallback) args[0];
                    refuse = (ConfirmCallback) args[1];
                    yield null;
                }
                case "getNextPublishSeqNo" -> nextSeq;
                case "basicPublish" -> {
                    AMQP.BasicProperties p = (AMQP.BasicProperties) args[3];
                    published.add(new Published((String) args[0], (String) args[1], (Boolean) args[2],
                            p.getHeaders() == null ? Map.of() : p.getHeaders(), nextSeq++));
                    yield null;
                }
                case "queueDeclare" -> {
                    if (declareFails) {
                        throw new java.io.IOException("access refused");
                    }
                    declared.add((String) args[0]);
                    yield null;
                }
                default -> throw new UnsupportedOperationException(method.getName());
            });
    private final Connection connection = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "createChannel" -> publishing;
                case "isOpen" -> true;
                default -> throw new UnsupportedOperationException(method.getName());
            });

    /** The wall time dead letters are stamped with. */
    private static final Instant NOW = Instant.parse("2026-12-03T12:00:00Z");

    private final IncomingSettings settings = TestChannelConfig.of(Map.of("channel-name", "orders", "queue.name", "q",
            "retry-delay", "1s", "retry-broker-delay-above", "5s"), ChannelConfig.Direction.INCOMING).incoming();
    private final CopySignature signature = CopySignature.of(settings);
    private final Delivery.ChannelGeneration generation = new Delivery.ChannelGeneration();
    private final Handover handover = new Handover();
    /** Where held deliveries wait; the publisher's confirm timeouts wait in another, never run. */
    private final DrainedScheduler held = new DrainedScheduler();
    private final Settlement settlement = new Settlement(settings.retryDelay(), held, handover);
    private final ConfirmingPublisher publisher = publisher();
    private final Redelivery redelivery = new Redelivery(settings, settlement, () -> publisher, signature,
            new DelayQueues(settings, () -> connection, System::nanoTime), () -> requeueCounts, Clock.fixed(NOW, ZoneOffset.UTC),
            () -> DeadLetterListener.NONE);
    private final LogCapture log = new LogCapture();

    /** One publish on the publishing channel, with its sequence number for the confirm. */
    private record Published(String exchange, String routingKey, boolean mandatory, Map<String, Object> headers, long seq) {
    }

    private ConfirmingPublisher publisher() {
        try {
            return new ConfirmingPublisher(connection, Runnable::run, new DrainedScheduler(), Duration.ofSeconds(30));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @AfterEach
    void close() {
        log.close();
    }

    /** Delivery {@code tag}, attempt {@code attempt}, carrying the broker's headers of a quorum queue and a delay queue. */
    private Delivery delivery(long tag, int attempt) {
        Map<String, Object> headers = new HashMap<>();
        headers.put(RabbitHeaders.DELIVERY_COUNT, 3L);
        headers.put("x-death", List.of());
        headers.put("x-first-death-queue", "q.onceonly.delay.8000");
        headers.put(RabbitHeaders.RETRY_ATTEMPTS, attempt - 1);
        headers.put(RabbitHeaders.SIGNATURE, "old");
        headers.put(ConfirmingPublisher.SEQUENCE_HEADER, 99L);
        headers.put("app", "kept");
        IncomingRabbitMetadata m = new IncomingRabbitMetadata("orders", "q", "orders-x", "order.placed", false, tag,
                new AMQP.BasicProperties.Builder().headers(headers).build(), new byte[] {1, 2}, attempt);
        Delivery d = new Delivery(consuming, m, new Object(), generation, false, MessageTracing.NONE);
        settlement.track(d);
        return d;
    }

    private Published last() {
        return published.get(published.size() - 1);
    }

    private void confirmLast() throws java.io.IOException {
        confirm.handle(last().seq(), false);
    }

    private void refuseLast() throws java.io.IOException {
        refuse.handle(last().seq(), false);
    }

    /** Whether {@code p} is a signed copy to {@code routingKey} carrying {@code attempts}, without the broker's counts. */
    private void assertCopy(Published p, String routingKey, int attempts) {
        assertEquals("", p.exchange());
        assertEquals(routingKey, p.routingKey());
        assertTrue(p.mandatory(), "an unroutable copy must fail, not vanish");
        Map<String, Object> h = p.headers();
        assertEquals(attempts, h.get(RabbitHeaders.RETRY_ATTEMPTS));
        assertEquals("orders-x", h.get(RabbitHeaders.ORIGINAL_EXCHANGE));
        assertEquals("order.placed", h.get(RabbitHeaders.ORIGINAL_ROUTING_KEY));
        assertTrue(signature.verify((String) h.get(RabbitHeaders.SIGNATURE), "q", attempts, "orders-x", "order.placed",
                new byte[] {1, 2}), "signed for this queue, count and origin");
        assertFalse(h.containsKey(RabbitHeaders.DELIVERY_COUNT), "the broker's count starts again on the copy");
        assertFalse(h.containsKey("x-death") || h.containsKey("x-first-death-queue"), "death headers are not carried on");
        assertEquals("kept", h.get("app"));
    }

    @Test
    void aFailedAttemptIsCopiedWithItsCountAndTheOriginalAckedOnlyOnTheConfirm() throws Exception {
        Delivery d = delivery(1, 2);
        redelivery.retry(d, true);
        assertCopy(last(), "q", 2);
        assertEquals(Delivery.Stage.PUBLISHING, d.stage());
        assertEquals(List.of(), settled, "not acked before the broker confirmed the copy");
        confirmLast();
        assertEquals(List.of("ack 1"), settled);
    }

    /** BUSY, RETRY: the copy carries the attempts made before this one, which did not count. */
    @Test
    void aTryThatIsNotAnAttemptKeepsTheCount() throws Exception {
        redelivery.retry(delivery(1, 2), false);
        assertCopy(last(), "q", 1);
        confirmLast();
        assertEquals(List.of("ack 1"), settled);
    }

    /** Classic queue: a refused copy leaves the original held for the retry delay, then requeued; logged ONCE0506W. */
    @Test
    void aRefusedCopyRequeuesTheOriginalAfterTheRetryDelay() throws Exception {
        Delivery d = delivery(1, 1);
        redelivery.retry(d, true);
        refuseLast();
        String line = log.lines().stream().filter(l -> l.startsWith("ONCE0506W")).findFirst().orElseThrow();
        assertTrue(line.startsWith("ONCE0506W: Could not retry a message of channel 'orders' (body sha256 "), line);
        assertTrue(line.contains("): Refusal: the broker refused (nacked) the message; requeued after "), line);
        assertEquals(Delivery.Stage.HELD, d.stage());
        assertEquals(List.of(), settled);
        held.runQueued();
        assertEquals(List.of("nack 1 requeue=true"), settled);
        assertEquals(1, published.size(), "no second copy");
    }

    /** Where a requeue counts (quorum), a refused copy is published again after the retry delay instead. */
    @Test
    void aRefusedCopyOnAQueueWhereARequeueCountsIsPublishedAgain() throws Exception {
        requeueCounts = true;
        redelivery.retry(delivery(1, 2), true);
        refuseLast();
        assertEquals(1, published.size(), "not at once: after the retry delay");
        held.runQueued();
        assertEquals(2, published.size());
        assertCopy(last(), "q", 2);
        confirmLast();
        assertEquals(List.of("ack 1"), settled, "never requeued");
    }

    /** At shutdown: a copy that is not an attempt; refused, tried again after the retry delay. */
    @Test
    void aGivenBackDeliveryThatTheBrokerRefusedIsGivenBackAgain() throws Exception {
        redelivery.giveBack(delivery(1, 3));
        assertCopy(last(), "q", 2);
        refuseLast();
        assertEquals(List.of(), settled, "not requeued: that would spend an attempt");
        held.runQueued();
        assertEquals(2, published.size());
        assertCopy(last(), "q", 2);
        confirmLast();
        assertEquals(List.of("ack 1"), settled);
    }

    /** Above retry-broker-delay-above the broker holds the copy in a delay queue, declared once. */
    @Test
    void aLongDelayGoesThroughADelayQueue() throws Exception {
        redelivery.retryAfter(delivery(1, 1), Duration.ofSeconds(9));
        assertEquals(List.of("q.onceonly.delay.8000"), declared, "9 s rounds down to the 8 s queue");
        assertCopy(last(), "q.onceonly.delay.8000", 1);
        confirmLast();
        assertEquals(List.of("ack 1"), settled, "acked at once: the broker holds the delay, not a prefetch slot");

        redelivery.retryAfter(delivery(2, 1), Duration.ofSeconds(9));
        assertEquals(1, declared.size(), "declared once per renewal period");
    }

    /** A copy refused by a delay queue: the queue is declared again for the next copy; on quorum, republished to the work queue. */
    @Test
    void aCopyTheDelayQueueRefusedDeclaresItAgainAndOnQuorumGoesToTheQueue() throws Exception {
        requeueCounts = true;
        redelivery.retryAfter(delivery(1, 1), Duration.ofSeconds(9));
        refuseLast();
        held.runQueued();
        assertCopy(last(), "q", 1);
        confirmLast();
        assertEquals(List.of("ack 1"), settled);

        redelivery.retryAfter(delivery(2, 1), Duration.ofSeconds(9));
        assertEquals(2, declared.size(), "forgotten after the refusal: declared again");
    }

    /** Short delays, and a delay queue that cannot be declared: the consumer holds the delivery, then copies it to the queue. */
    @Test
    void aShortDelayOrAnUndeclarableDelayQueueIsHeldByTheConsumer() throws Exception {
        Delivery shortDelay = delivery(1, 1);
        redelivery.retryAfter(shortDelay, Duration.ofSeconds(2));
        declareFails = true;
        Delivery undeclarable = delivery(2, 1);
        redelivery.retryAfter(undeclarable, Duration.ofSeconds(9));
        assertTrue(log.contains("ONCE0520W"), log.lines().toString());
        assertEquals(List.of(), published);
        assertEquals(Delivery.Stage.HELD, shortDelay.stage());
        assertEquals(Delivery.Stage.HELD, undeclarable.stage());
        held.runQueued();
        assertEquals(2, published.size());
        assertCopy(published.get(0), "q", 1);
        assertCopy(published.get(1), "q", 1);
    }

    /** A delivery whose channel closed is back with the broker: no copy, nothing sent. */
    @Test
    void aStaleDeliveryIsNeitherCopiedNorSettledWithTheBroker() {
        Delivery d = delivery(1, 1);
        Delivery dead = delivery(2, 1);
        generation.next();
        redelivery.retry(d, true);
        redelivery.deadLetter(dead, new Disposition(Disposition.Action.DEAD_LETTER, Outcome.CONFLICT, "r", "c", "k"), DeadLetterListener.Reason.CONFLICT);
        assertEquals(List.of(), published);
        assertTrue(d.isSettled() && dead.isSettled());
        assertEquals(List.of(), settled);
    }

    @Test
    void aDeadLetterCarriesTheDecisionAndLeavesTheRetryHeadersBehind() throws Exception {
        Delivery d = delivery(1, 3);
        redelivery.deadLetter(d, new Disposition(Disposition.Action.DEAD_LETTER, Outcome.CONFLICT,
                "key was processed before with a different body", "billing", "ab12"), DeadLetterListener.Reason.CONFLICT);
        Published p = last();
        assertEquals("q.dlx", p.exchange());
        assertEquals("q", p.routingKey());
        assertTrue(p.mandatory());
        Map<String, Object> h = p.headers();
        assertEquals("CONFLICT", h.get(RabbitHeaders.OUTCOME));
        assertEquals("key was processed before with a different body", h.get(RabbitHeaders.REASON));
        assertEquals("billing", h.get(RabbitHeaders.CONSUMER));
        assertEquals("orders", h.get(RabbitHeaders.CHANNEL));
        assertEquals("q", h.get(RabbitHeaders.QUEUE));
        assertEquals(3, h.get(RabbitHeaders.ATTEMPTS));
        assertEquals("orders-x", h.get(RabbitHeaders.ORIGINAL_EXCHANGE));
        assertEquals("order.placed", h.get(RabbitHeaders.ORIGINAL_ROUTING_KEY));
        assertFalse(h.containsKey(RabbitHeaders.RETRY_ATTEMPTS));
        assertFalse(h.containsKey(RabbitHeaders.SIGNATURE));
        assertEquals(1L, h.get(ConfirmingPublisher.SEQUENCE_HEADER), "this publish's own sequence, not the incoming one");
        assertEquals("kept", h.get("app"));
        assertEquals(NOW.toEpochMilli(), h.get(RabbitHeaders.DEAD_LETTERED_AT), "dated, for the purge's hold and the operations");
        assertEquals(36, h.get(RabbitHeaders.DEAD_LETTER_ID).toString().length(), "named, for the operations: " + h);
        assertEquals("ab12", h.get(RabbitHeaders.KEY_DIGEST));
        assertFalse(log.contains("ONCE0505W"), "logged once the broker has it");
        assertEquals(List.of(), settled);

        confirmLast();
        assertEquals(List.of("ack 1"), settled);
        String line = log.lines().stream().filter(l -> l.startsWith("ONCE0505W")).findFirst().orElseThrow();
        assertTrue(line.contains("channel 'orders' (consumer 'billing', key ab12, body sha256 "), line);
        assertTrue(line.endsWith("outcome CONFLICT after 3 attempt(s), to exchange 'q.dlx': key was processed before with a different body"), line);
    }

    /**
     * No guarded method decided (no consumer, no key): the channel stands in for the consumer, "-"
     * for the key, and a FAILED reason is logged by its class only (its message may quote the body).
     */
    @Test
    void aDeadLetterWithoutAGuardDecisionNamesTheChannelAndLogsNoExceptionMessage() throws Exception {
        redelivery.deadLetter(delivery(1, 5), new Disposition(Disposition.Action.DEAD_LETTER, Outcome.FAILED,
                "java.lang.IllegalStateException: card 4111 declined", null, ""), DeadLetterListener.Reason.MAX_ATTEMPTS);
        assertEquals("orders", last().headers().get(RabbitHeaders.CONSUMER));
        assertEquals("java.lang.IllegalStateException: card 4111 declined", last().headers().get(RabbitHeaders.REASON),
                "the header keeps the whole reason");
        confirmLast();
        String line = log.lines().stream().filter(l -> l.startsWith("ONCE0505W")).findFirst().orElseThrow();
        assertTrue(line.contains("(consumer 'orders', key -, "), line);
        assertTrue(line.endsWith(": java.lang.IllegalStateException"), line);
    }

    /**
     * Refused by the dead-letter exchange, on a classic queue as on a quorum one: held and
     * dead-lettered again after the delay, never requeued (a requeue handed the message to the
     * handler again, at its last attempt, every delay; BrokenDeadLetterExchangeTest on the broker).
     */
    @Test
    void aRefusedDeadLetterIsHeldAndPublishedAgainNeverRequeued() throws Exception {
        Disposition conflict = new Disposition(Disposition.Action.DEAD_LETTER, Outcome.CONFLICT, "r", "billing", "k");
        for (boolean counts : new boolean[] {false, true}) {
            requeueCounts = counts;
            int before = published.size();
            redelivery.deadLetter(delivery(counts ? 2 : 1, 1), conflict, DeadLetterListener.Reason.CONFLICT);
            refuseLast();
            assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("ONCE0506W: Could not dead-letter a message of channel "
                    + "'orders'") && l.contains("; held and published again after ")), log.lines().toString());
            held.runQueued();
            assertEquals(before + 2, published.size(), "dead-lettered again");
            assertEquals("q.dlx", last().exchange());
            confirmLast();
        }
        assertEquals(List.of("ack 1", "ack 2"), settled, "never requeued");
    }
}
