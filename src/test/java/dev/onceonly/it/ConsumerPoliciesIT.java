package dev.onceonly.it;

import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.ServerLog;
import dev.onceonly.testing.TestRabbit;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-consumer policies on Liberty, in the test application built from the library artifact: a
 * composite key ({@code /tenant,/orderId}) with a conflict policy on some fields only, and a
 * backoff whose delays RabbitMQ holds in delay queues instead of the consumer.
 */
class ConsumerPoliciesIT {

    static final String NAMES = TestRabbit.names(ItServer.PORT);
    static final String EXCHANGE = NAMES + ".x";
    static final Duration LIMIT = Duration.ofSeconds(60);

    static TestRabbit rabbit;

    @BeforeAll
    static void connectedServer() throws Exception {
        rabbit = new TestRabbit();
        for (String q : List.of("composite", "backoff")) {
            await("a consumer on " + q, LIMIT, () -> rabbit.consumers(NAMES + "." + q), n -> n >= 1);
        }
    }

    @AfterAll
    static void close() throws Exception {
        rabbit.close();
    }

    @Test
    void compositeKeysSeparateTenantsAndConflictFieldsIgnoreWhatTheProducerReserialised() throws Exception {
        String order = "o-" + UUID.randomUUID();
        JsonObject before = ItServer.outcomes("it-composite");
        // Same order id under two tenants: two keys. The second copy for tenant a was re-serialised
        // (other field order, a new timestamp): a duplicate. A third with another quantity: a conflict.
        rabbit.publish(EXCHANGE, "it.composite", "{\"tenant\":\"a\",\"orderId\":\"" + order + "\",\"sku\":\"w\",\"quantity\":2,\"at\":1}");
        rabbit.publish(EXCHANGE, "it.composite", "{\"tenant\":\"b\",\"orderId\":\"" + order + "\",\"sku\":\"w\",\"quantity\":2,\"at\":1}");
        rabbit.publish(EXCHANGE, "it.composite", "{\"at\":2,\"quantity\":2,\"sku\":\"w\",\"orderId\":\"" + order + "\",\"tenant\":\"a\"}");
        rabbit.publish(EXCHANGE, "it.composite", "{\"tenant\":\"a\",\"orderId\":\"" + order + "\",\"sku\":\"w\",\"quantity\":3,\"at\":3}");

        await("four decisions", LIMIT, () -> decided(before), n -> n >= 4);
        JsonObject after = ItServer.outcomes("it-composite");
        assertEquals(1, ItServer.effects("it-composite", "a/" + order), after.toString());
        assertEquals(1, ItServer.effects("it-composite", "b/" + order), after.toString());
        assertEquals(2, after.getInt("PROCESSED") - before.getInt("PROCESSED"), after.toString());
        assertEquals(1, after.getInt("DUPLICATE") - before.getInt("DUPLICATE"), after.toString());
        assertEquals(1, after.getInt("CONFLICT") - before.getInt("CONFLICT"), after.toString());
        await("the conflicting copy in the dead-letter queue", LIMIT, () -> TestRabbit.total(NAMES + ".composite.dlq"), n -> n >= 1);
    }

    @Test
    void retriesWaitInTheBrokersDelayQueuesAndTheThirdAttemptSucceeds() throws Exception {
        ServerLog log = ServerLog.of("onceonly-it");
        int mark = log.mark();
        String body = "backoff-" + UUID.randomUUID();
        rabbit.publish(EXCHANGE, "it.backoff", body);

        await("the effect after two failures", LIMIT, () -> ItServer.effects("it-backoff", body), n -> n == 1);
        assertEquals(3, ItServer.deliveries("it-backoff", body));
        List<String> delayQueues = Arrays.stream(TestRabbit.rabbitmqctl("-q", "list_queues", "name").split("\n"))
                .map(String::trim).filter(q -> q.startsWith(NAMES + ".backoff.onceonly.delay.")).toList();
        assertFalse(delayQueues.isEmpty(), "the retries waited in a delay queue of the broker's");
        await("the work queue to be empty (acked)", LIMIT, () -> TestRabbit.total(NAMES + ".backoff"), n -> n == 0);
        assertEquals(0, TestRabbit.total(NAMES + ".backoff.dlq"));
        // Each failed attempt is one line of the connector's, without a trace (the message was not
        // dead-lettered); Reactive Messaging never saw the failures, so it logged no error.
        List<String> attempts = log.linesSince(mark, "ONCE0516W").stream().filter(l -> l.contains("consumer 'it-backoff'")).toList();
        assertEquals(2, attempts.size(), attempts.toString());
        assertTrue(attempts.get(0).contains("failed on attempt 1 of "), attempts.get(0));
        assertTrue(attempts.get(1).contains("failed on attempt 2 of "), attempts.get(1));
        assertEquals(List.of(), log.tracedSince(mark, "ONCE0516W"));
        assertEquals(List.of(), log.raisedSince(mark));
        assertEquals(List.of(), log.incidentsSince(mark).stream().filter(l -> l.contains("backoff: failing on purpose")).toList());
    }

    private static int decided(JsonObject before) throws Exception {
        JsonObject now = ItServer.outcomes("it-composite");
        int n = 0;
        for (String o : List.of("PROCESSED", "DUPLICATE", "CONFLICT")) {
            n += now.getInt(o) - before.getInt(o);
        }
        return n;
    }
}
