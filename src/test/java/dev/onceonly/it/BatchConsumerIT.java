package dev.onceonly.it;

import com.rabbitmq.client.GetResponse;
import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.ServerLog;
import dev.onceonly.testing.TestRabbit;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A guarded batch consumer on Liberty ({@code BatchConsumer} in the test application: the channel's
 * {@code batch=true}, a method taking {@code List<String>}, the ledger on): every message of a
 * batch is decided and settled on its own. Duplicates inside a batch and across batches run once,
 * a poison message is dead-lettered alone while the others of its batch are processed once, and
 * messages delivered again (as after a crash) are duplicates.
 */
class BatchConsumerIT {

    static final String NAMES = TestRabbit.names(ItServer.PORT);
    static final String EXCHANGE = NAMES + ".x";
    static final String QUEUE = NAMES + ".batch";
    static final Duration LIMIT = Duration.ofSeconds(60);

    static TestRabbit rabbit;

    @BeforeAll
    static void connectedServer() throws Exception {
        rabbit = new TestRabbit();
        await("a consumer on the batch queue", LIMIT, () -> rabbit.consumers(QUEUE), n -> n >= 1);
    }

    @AfterAll
    static void close() throws Exception {
        rabbit.close();
    }

    @Test
    void aPoisonMessageIsDeadLetteredAloneAndEveryOtherMessageOfItsBatchIsProcessedOnce() throws Exception {
        ServerLog log = ServerLog.of("onceonly-it");
        int mark = log.mark();
        String run = "b-" + UUID.randomUUID();
        JsonObject before = ItServer.outcomes("it-batch");
        // Published back to back: they arrive within the batch's linger and are handed over together.
        // Two copies inside the batch, one poison message among them.
        List<String> ids = List.of(run + "-1", run + "-2", run + "-3", run + "-4", run + "-5", run + "-6");
        for (String body : List.of(body(ids.get(0)), body(ids.get(1)), body(ids.get(2)), body(ids.get(1)),
                body(ids.get(3)), poison(run + "-poison"), body(ids.get(4)), body(ids.get(5)), body(ids.get(0)))) {
            rabbit.publish(EXCHANGE, "it.batch", body);
        }

        for (String id : ids) {
            await(id + " processed", LIMIT, () -> ItServer.effects("it-batch", id), n -> n >= 1);
        }
        await("the queue drained", LIMIT, () -> TestRabbit.total(QUEUE), n -> n == 0);
        await("nine decisions", LIMIT, () -> decided(before), n -> n >= 9);
        for (String id : ids) {
            assertEquals(1, ItServer.effects("it-batch", id), id + ": its effect committed once");
        }
        int largest = Integer.parseInt(ItServer.get("/batches/it-batch").trim());
        assertTrue(largest > 1, "the consumer was handed batches, the largest of " + largest);

        List<String> deadLetters = deadLettersOf(run);
        assertEquals(List.of(poison(run + "-poison")), deadLetters, "only the poison message is dead-lettered");
        JsonObject after = ItServer.outcomes("it-batch");
        assertEquals(6, after.getInt("PROCESSED") - before.getInt("PROCESSED"), after.toString());
        assertEquals(2, after.getInt("DUPLICATE") - before.getInt("DUPLICATE"), after.toString());
        assertEquals(1, after.getInt("FAILED") - before.getInt("FAILED"), "the poison message failed once, alone: " + after);
        // Reactive Messaging never saw a failure: each message's outcome went to its own delivery.
        assertEquals(List.of(), log.raisedSince(mark));
    }

    @Test
    void messagesDeliveredAgainAreDuplicatesAndRunNoMore() throws Exception {
        String run = "r-" + UUID.randomUUID();
        List<String> ids = List.of(run + "-1", run + "-2", run + "-3", run + "-4", run + "-5");
        for (String id : ids) {
            rabbit.publish(EXCHANGE, "it.batch", body(id));
        }
        for (String id : ids) {
            await(id + " processed", LIMIT, () -> ItServer.effects("it-batch", id), n -> n == 1);
        }
        JsonObject before = ItServer.outcomes("it-batch");

        // The same messages again, as the broker delivers them again after a consumer died before its acks.
        for (String id : ids) {
            rabbit.publish(EXCHANGE, "it.batch", body(id));
        }
        await("five duplicates", LIMIT, () -> ItServer.outcomes("it-batch").getInt("DUPLICATE") - before.getInt("DUPLICATE"),
                n -> n >= 5);
        await("the queue drained", LIMIT, () -> TestRabbit.total(QUEUE), n -> n == 0);
        for (String id : ids) {
            assertEquals(1, ItServer.effects("it-batch", id), id + " ran once");
        }
        assertEquals(0, ItServer.outcomes("it-batch").getInt("PROCESSED") - before.getInt("PROCESSED"));
    }

    private static String body(String id) {
        return "{\"id\":\"" + id + "\"}";
    }

    private static String poison(String id) {
        return "{\"id\":\"" + id + "\",\"poison\":true}";
    }

    /** Decisions since {@code before}: processed, duplicates and failures (a BUSY copy comes again and is decided then). */
    private static int decided(JsonObject before) throws Exception {
        JsonObject now = ItServer.outcomes("it-batch");
        int n = 0;
        for (String o : List.of("PROCESSED", "DUPLICATE", "FAILED")) {
            n += now.getInt(o) - before.getInt(o);
        }
        return n;
    }

    /** The bodies of this run's messages in the dead-letter queue, taken off it. */
    private static List<String> deadLettersOf(String run) throws Exception {
        await("a dead letter", LIMIT, () -> TestRabbit.total(QUEUE + ".dlq"), n -> n >= 1);
        return rabbit.drain(QUEUE + ".dlq").stream().map(GetResponse::getBody)
                .map(b -> new String(b, StandardCharsets.UTF_8)).filter(b -> b.contains(run)).toList();
    }
}
