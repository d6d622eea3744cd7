package dev.onceonly.it;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.TestRabbit;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code onceonly-rabbitmq} connector inside a real Open Liberty server, against the machine's
 * RabbitMQ and Redis, through the consumers of the test application (src/test/itapp). Every message
 * carries a fresh id, so runs never see each other's claims.
 */
class RabbitConnectorIT {

    static final String NAMES = TestRabbit.names(ItServer.PORT);
    static final String EXCHANGE = NAMES + ".x";
    static final Duration LIMIT = Duration.ofSeconds(60);
    static final List<String> QUEUES = List.of("arrivals", "flaky", "doomed", "doomed-quorum", "keyed", "busy-a",
            "busy-b", "steady", "restart");

    static TestRabbit rabbit;
    static final Map<String, List<GetResponse>> deadLetters = new ConcurrentHashMap<>();

    @BeforeAll
    static void connectedServer() throws Exception {
        rabbit = new TestRabbit();
        // The server connects once the application started; wait until every channel consumes.
        for (String q : QUEUES) {
            await("a consumer on " + q, LIMIT, () -> consumersOf(NAMES + "." + q), n -> n >= 1);
        }
    }

    @AfterAll
    static void close() throws Exception {
        rabbit.close();
    }

    @Test
    void fiveHundredMessagesThroughTheOutgoingChannelAllArriveWithTheirMetadata() throws Exception {
        String run = UUID.randomUUID().toString();
        JsonObject published = ItServer.postJson("/publish/" + run + "/500");
        assertEquals(500, published.getInt("confirmed"));

        JsonObject arrivals = await("500 arrivals", LIMIT, () -> ItServer.json("/arrivals/" + run + "?count=500"),
                a -> a.getInt("arrived") == 500);
        assertEquals("", arrivals.getString("mismatches"));
        assertEquals(500, arrivals.getInt("deliveries"), "each message delivered once");
        assertEquals(0, arrivals.getInt("withoutContext"), "every delivery ran with the application's context");
        await("the arrivals queue to be empty", LIMIT, () -> TestRabbit.total(NAMES + ".arrivals"), n -> n == 0);
    }

    @Test
    void handlerFailingTwiceIsProcessedOnceOnTheThirdDeliveryAndAcked() throws Exception {
        String body = "flaky-" + UUID.randomUUID();
        rabbit.publish(EXCHANGE, "it.flaky", body);

        await("the effect", LIMIT, () -> ItServer.effects("it-flaky", body), n -> n == 1);
        await("the queue to be empty (acked)", LIMIT, () -> TestRabbit.total(NAMES + ".flaky"), n -> n == 0);
        assertEquals(3, ItServer.deliveries("it-flaky", body), "two failures, then success");
        assertEquals(1, ItServer.effects("it-flaky", body));
        assertEquals(null, find(NAMES + ".flaky.dlq", body), "not dead-lettered");
    }

    @Test
    void alwaysFailingPlainConsumerIsDeadLetteredAfterMaxAttemptsWithReasonAndOriginalIntact() throws Exception {
        deadLetteredAfterThreeAttempts("doomed", "it-doomed", "it-doomed");
    }

    @Test
    void alwaysFailingGuardedConsumerOnAQuorumQueueIsDeadLetteredByTheBrokersDeliveryCount() throws Exception {
        deadLetteredAfterThreeAttempts("doomed-quorum", "it-doomed-quorum", "it-doomed-quorum");
    }

    private void deadLetteredAfterThreeAttempts(String queue, String channel, String consumer) throws Exception {
        String body = queue + "-" + UUID.randomUUID();
        String id = UUID.randomUUID().toString();
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(id).contentType("text/plain")
                .headers(Map.of("x-custom", "keep-me", "x-number", 42)).build();
        rabbit.publish(EXCHANGE, "it." + queue, props, body);

        GetResponse dead = await("the dead letter", LIMIT, () -> find(NAMES + "." + queue + ".dlq", body), r -> r != null);
        Map<String, Object> h = dead.getProps().getHeaders();
        assertEquals("FAILED", str(h.get("x-onceonly-outcome")));
        assertTrue(str(h.get("x-onceonly-reason")).contains("doomed: always fails"), str(h.get("x-onceonly-reason")));
        assertEquals(consumer, str(h.get("x-onceonly-consumer")));
        assertEquals(channel, str(h.get("x-onceonly-channel")));
        assertEquals(NAMES + "." + queue, str(h.get("x-onceonly-queue")));
        assertEquals(3, ((Number) h.get("x-onceonly-attempts")).intValue());
        assertEquals(EXCHANGE, str(h.get("x-onceonly-exchange")));
        assertEquals("it." + queue, str(h.get("x-onceonly-routing-key")));
        // The original, unchanged: body, message id, content type and the application's headers.
        assertEquals(body, body(dead));
        assertEquals(id, dead.getProps().getMessageId());
        assertEquals("text/plain", dead.getProps().getContentType());
        assertEquals("keep-me", str(h.get("x-custom")));
        assertEquals(42, ((Number) h.get("x-number")).intValue());

        assertEquals(3, ItServer.deliveries(channel, body));
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(NAMES + "." + queue), n -> n == 0);
    }

    @Test
    void duplicateOfAMessageInProgressIsRequeuedWithDelayThenAckedAsDuplicate() throws Exception {
        String id = "busy-" + UUID.randomUUID();
        String body = "{\"order\":\"" + id + "\"}";
        rabbit.publish(EXCHANGE, "it.busy.a", new AMQP.BasicProperties.Builder().messageId(id)
                .headers(Map.of("x-hold", true)).build(), body);
        await("the holder to hold the key", LIMIT, () -> Boolean.parseBoolean(ItServer.get("/busy/holding")), b -> b);
        JsonObject before = ItServer.outcomes("it-busy");

        rabbit.publish(EXCHANGE, "it.busy.b", new AMQP.BasicProperties.Builder().messageId(id).build(), body);
        // Seen as BUSY at least twice: requeued, and delivered again after the delay.
        await("three deliveries of the duplicate", LIMIT, () -> ItServer.deliveries("it-busy-b", id), n -> n >= 3);
        ItServer.post("/busy/release");

        await("the duplicate to be acked", LIMIT, () -> TestRabbit.total(NAMES + ".busy-b"), n -> n == 0);
        await("the holder's ack", LIMIT, () -> TestRabbit.total(NAMES + ".busy-a"), n -> n == 0);
        JsonObject after = ItServer.outcomes("it-busy");
        assertEquals(1, ItServer.effects("it-busy", id), "processed once, by the holder");
        assertEquals(1, after.getInt("PROCESSED") - before.getInt("PROCESSED"));
        assertEquals(1, after.getInt("DUPLICATE") - before.getInt("DUPLICATE"), "the copy ends as DUPLICATE");
        int busy = after.getInt("BUSY") - before.getInt("BUSY");
        int deliveries = ItServer.deliveries("it-busy-b", id);
        assertEquals(deliveries - 1, busy, "every delivery but the last was BUSY");
        // No hot loop: the test released the holder right after the third delivery; a requeue
        // without delay would have delivered the copy hundreds of times by then.
        assertTrue(deliveries <= 6, "deliveries of the duplicate: " + deliveries);
        System.out.printf("BUSY: the duplicate was delivered %d times (%d BUSY, then DUPLICATE)%n", deliveries, busy);
    }

    @Test
    void conflictAndRejectedGoToTheDeadLetterQueueWithTheReason() throws Exception {
        String id = "keyed-" + UUID.randomUUID();
        String first = "first-" + id;
        rabbit.publish(EXCHANGE, "it.keyed", new AMQP.BasicProperties.Builder().messageId(id).build(), first);
        await("the first message", LIMIT, () -> ItServer.effects("it-keyed", first), n -> n == 1);

        String conflicting = "other-" + id;
        rabbit.publish(EXCHANGE, "it.keyed", new AMQP.BasicProperties.Builder().messageId(id).build(), conflicting);
        String noId = "no-id-" + id;
        rabbit.publish(EXCHANGE, "it.keyed", noId);

        String dlq = NAMES + ".keyed.dlq";
        GetResponse conflict = await("the CONFLICT dead letter", LIMIT, () -> find(dlq, conflicting), r -> r != null);
        assertEquals("CONFLICT", str(conflict.getProps().getHeaders().get("x-onceonly-outcome")));
        assertTrue(str(conflict.getProps().getHeaders().get("x-onceonly-reason")).contains("different body"));
        assertEquals("it-keyed", str(conflict.getProps().getHeaders().get("x-onceonly-consumer")));
        GetResponse rejected = await("the REJECTED dead letter", LIMIT, () -> find(dlq, noId), r -> r != null);
        assertEquals("REJECTED", str(rejected.getProps().getHeaders().get("x-onceonly-outcome")));
        assertTrue(str(rejected.getProps().getHeaders().get("x-onceonly-reason")).contains("message-id"));
        assertEquals(1, ((Number) rejected.getProps().getHeaders().get("x-onceonly-attempts")).intValue(), "dead-lettered at once");

        assertEquals(0, ItServer.effects("it-keyed", conflicting));
        assertEquals(0, ItServer.effects("it-keyed", noId));
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(NAMES + ".keyed"), n -> n == 0);
    }

    @Test
    void payloadOnlyGuardedMethodKeysOnTheRealRoutingKey() throws Exception {
        String body = "same-body-" + UUID.randomUUID();
        JsonObject before = ItServer.outcomes("it-steady");
        rabbit.publish(EXCHANGE, "it.steady.k1", body);
        rabbit.publish(EXCHANGE, "it.steady.k2", body);
        rabbit.publish(EXCHANGE, "it.steady.k1", body);

        // Same body under two routing keys: two messages. The same routing key again: a duplicate.
        await("both routing keys processed", LIMIT, () -> ItServer.effects("it-steady", body), n -> n == 2);
        await("the duplicate", LIMIT, () -> ItServer.outcomes("it-steady").getInt("DUPLICATE") - before.getInt("DUPLICATE"), n -> n >= 1);
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(NAMES + ".steady"), n -> n == 0);
        assertEquals(2, ItServer.effects("it-steady", body));
    }

    @Test
    void connectionClosedByTheBrokerMidStreamLosesNothingAndProcessesNothingTwice() throws Exception {
        String run = "drop-" + UUID.randomUUID() + "-";
        int count = 400;
        // it-steady has concurrency 2: close the connection of one copy while the other goes on.
        String connection = "onceonly:it-steady$1:consume";
        int batchesBefore = ItServer.outcomes("it-steady").getInt("claimAheadBatches");
        String pidBefore = TestRabbit.connectionPid(connection);
        assertNotNull(pidBefore);
        for (int i = 0; i < count; i++) {
            rabbit.publish(EXCHANGE, "it.steady.drop", run + i);
        }
        JsonObject atClose = await("some messages processed", LIMIT, () -> ItServer.summary("it-steady", run),
                s -> s.getInt("keys") >= 40);
        TestRabbit.closeConnection(connection);
        assertTrue(atClose.getInt("keys") < count, "closed mid-stream");

        JsonObject done = await("every message processed", Duration.ofSeconds(120), () -> ItServer.summary("it-steady", run),
                s -> s.getInt("keys") == count);
        assertEquals(count, done.getInt("total"), "no message processed twice");
        assertEquals(1, done.getInt("maxPerKey"));
        await("the queue to be empty", LIMIT, () -> TestRabbit.total(NAMES + ".steady"), n -> n == 0);
        String pidAfter = await("the recovered connection", LIMIT, () -> TestRabbit.connectionPid(connection), p -> p != null);
        assertNotEquals(pidBefore, pidAfter, "a new connection replaced the closed one");
        assertEquals(2, rabbit.consumers(NAMES + ".steady"), "both copies (concurrency 2) consume again");
        int batches = ItServer.outcomes("it-steady").getInt("claimAheadBatches") - batchesBefore;
        assertTrue(batches > 0, "buffered deliveries were claimed ahead (claim-ahead=8), so the drop met claims held for them");
        System.out.printf("Connection drop: closed after %d of %d messages; %d processed, each once; handler runs %d; "
                        + "%d batches claimed ahead%n",
                atClose.getInt("keys"), count, done.getInt("keys"), done.getInt("deliveries"), batches);
    }

    static int consumersOf(String queue) {
        try {
            return rabbit.consumers(queue);
        } catch (Exception notYetDeclared) {
            return 0;
        }
    }

    /**
     * The dead letter with this body, if it arrived. Reading a dead letter takes it off the queue,
     * so every one read is kept for the tests that look for it later.
     */
    static GetResponse find(String queue, String body) throws Exception {
        List<GetResponse> seen = deadLetters.computeIfAbsent(queue, q -> new CopyOnWriteArrayList<>());
        seen.addAll(rabbit.drain(queue));
        return seen.stream().filter(r -> body(r).equals(body)).findFirst().orElse(null);
    }

    static String body(GetResponse r) {
        return new String(r.getBody(), StandardCharsets.UTF_8);
    }

    static String str(Object headerValue) {
        return headerValue == null ? null : headerValue.toString();
    }

}
