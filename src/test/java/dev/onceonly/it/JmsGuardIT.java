package dev.onceonly.it;

import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.ServerLog;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.StringReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code @IdempotentMessage} on a message-driven bean's {@code onMessage(jakarta.jms.Message)} on
 * Liberty's own messaging engine (the test application's JmsOrders, queue
 * {@code orders}, configured as docs/jms.md shows with 3 deliveries at most, then its exception destination):
 * copies of a message have one effect and one ledger row, written in the bean's container-managed
 * transaction; a message that always fails is delivered 3 times, then moved aside by the engine;
 * one that fails once is applied once on its redelivery; one without a key is REJECTED and moved to
 * OnceOnly's dead-letter queue at once, with the reason. A BUSY refusal or a failure rolls the
 * delivery back without an exception reaching the container: the server logs no CNTR0020E, no FFDC
 * incident of the handler's exception or the refusal, and for a failure one ONCE0704W line per
 * delivery, the stack trace with the first. (The container still records its own rollback of a
 * transaction marked rollback-only as incidents, once in the server's life: Liberty creates an
 * identical incident once.)
 */
class JmsGuardIT {

    private static final ServerLog LOG = ServerLog.of("onceonly-it");

    private static final String BASE = "http://localhost:" + ItServer.PORT + "/itapp/api/jms";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Duration LIMIT = Duration.ofSeconds(60);

    @Test
    void copiesOfAMessageHaveOneEffectAndOneLedgerRowCommittedWithTheBean() throws Exception {
        int mark = LOG.mark();
        String id = "jms-" + UUID.randomUUID();
        JsonObject before = ItServer.outcomes("it-jms");
        long rowsBefore = ledgerRows();

        send("{\"id\":\"" + id + "\",\"sku\":\"widget\"}", 3);

        await("the three copies decided", LIMIT, () -> decided(before), n -> n >= 3);
        JsonObject after = ItServer.outcomes("it-jms");
        assertEquals(1, ItServer.effects("it-jms", id), "one effect; outcomes " + after);
        assertEquals(1, after.getInt("PROCESSED") - before.getInt("PROCESSED"), after.toString());
        assertEquals(2, after.getInt("DUPLICATE") - before.getInt("DUPLICATE"), after.toString());
        assertEquals(1, ItServer.deliveries("it-jms", id), "the handler ran once");
        assertEquals(rowsBefore + 1, ledgerRows(), "one ledger row, committed with the bean's transaction");
        // A copy that met the claim while another held it was BUSY: held, then rolled back quietly.
        assertQuiet(mark);
    }

    @Test
    void aMessageThatFailsOnceIsRolledBackQuietlyAndAppliedOnceOnItsRedelivery() throws Exception {
        int mark = LOG.mark();
        String id = "jms-fails-once-" + UUID.randomUUID();
        JsonObject before = ItServer.outcomes("it-jms");
        long rowsBefore = ledgerRows();
        send("{\"id\":\"" + id + "\",\"failRuns\":1}", 1);

        // PROCESSED is reported once the bean's transaction has committed.
        await("processed after one failure", LIMIT, () -> ItServer.outcomes("it-jms").getInt("PROCESSED") - before.getInt("PROCESSED"),
                n -> n >= 1);
        JsonObject after = ItServer.outcomes("it-jms");
        assertEquals(1, ItServer.effects("it-jms", id), "applied once; outcomes " + after);
        assertEquals(2, ItServer.deliveries("it-jms", id), "failed once, then applied");
        assertEquals(1, after.getInt("FAILED") - before.getInt("FAILED"), after.toString());
        assertEquals(1, after.getInt("PROCESSED") - before.getInt("PROCESSED"), after.toString());
        assertEquals(rowsBefore + 1, ledgerRows(), "one ledger row: the failed delivery's rolled back with it");
        await("the failure's line", LIMIT, () -> LOG.linesSince(mark, "ONCE0704W").size(), n -> n == 1);
        assertEquals(1, LOG.tracedSince(mark, "ONCE0704W").size(), "its trace, once");
        assertQuiet(mark);
    }

    @Test
    void aMessageThatAlwaysFailsIsDeliveredUpToTheEnginesLimitThenMovedToItsExceptionDestination() throws Exception {
        int mark = LOG.mark();
        String id = "jms-failing-" + UUID.randomUUID();
        JsonObject before = ItServer.outcomes("it-jms");
        send("{\"id\":\"" + id + "\",\"fail\":true}", 1);

        JsonArray moved = await("the message in the exception destination", LIMIT, () -> browse("exceptions", id), a -> a.size() == 1);
        JsonObject after = ItServer.outcomes("it-jms");
        // maxRedeliveryCount=3: three deliveries, each rolled back. The engine redelivers at once, and
        // one may meet the claim before the rollback's afterCompletion released it: BUSY, not run.
        assertEquals(3, after.getInt("FAILED") + after.getInt("BUSY") - before.getInt("FAILED") - before.getInt("BUSY"),
                after.toString());
        int ran = ItServer.deliveries("it-jms", id);
        assertTrue(ran >= 1 && ran <= 3, "the handler ran " + ran + " times");
        assertEquals(ran, after.getInt("FAILED") - before.getInt("FAILED"), "each run failed; " + after);
        assertEquals(0, ItServer.effects("it-jms", id));
        assertTrue(moved.getJsonObject(0).getString("body").contains(id));
        await("one line per failed delivery", LIMIT, () -> LOG.linesSince(mark, "ONCE0704W").size(), n -> n == ran);
        assertEquals(1, LOG.tracedSince(mark, "ONCE0704W").size(), "the stack trace once, with the first failure");
        assertQuiet(mark);
    }

    /** Nothing reached the container: no error of its, no incident of the handler's exception or a refusal. */
    private static void assertQuiet(int mark) throws Exception {
        assertEquals(List.of(), LOG.raisedSince(mark));
        assertEquals(List.of(), LOG.incidentsSince(mark).stream()
                .filter(l -> l.contains("failing on purpose") || l.contains("MessageRefusedException")).toList());
    }

    @Test
    void aMessageWithoutKeyIsRejectedAndMovedToTheDeadLetterQueueAtOnceWithTheReason() throws Exception {
        String marker = "jms-keyless-" + UUID.randomUUID();
        JsonObject before = ItServer.outcomes("it-jms");
        send("{\"note\":\"" + marker + "\"}", 1);

        JsonArray moved = await("the message in the dead-letter queue", LIMIT, () -> browse("dlq", marker), a -> a.size() == 1);
        JsonObject letter = moved.getJsonObject(0);
        assertEquals("REJECTED", letter.getString("onceonly_outcome"));
        assertEquals("it-jms", letter.getString("onceonly_consumer"));
        assertEquals("1", letter.getString("onceonly_attempts"), "moved on its first delivery, not after the engine's limit");
        assertTrue(letter.getString("onceonly_reason").contains("/id"), letter.toString());
        assertEquals("orders", letter.getString("onceonly_destination"));
        JsonObject after = ItServer.outcomes("it-jms");
        assertEquals(1, after.getInt("REJECTED") - before.getInt("REJECTED"), after.toString());
        assertTrue(browse("exceptions", marker).isEmpty(), "not also in the exception destination");
    }

    private static int decided(JsonObject before) throws Exception {
        JsonObject now = ItServer.outcomes("it-jms");
        return now.getInt("PROCESSED") + now.getInt("DUPLICATE") - before.getInt("PROCESSED") - before.getInt("DUPLICATE");
    }

    private static long ledgerRows() throws Exception {
        try (Connection c = LedgerDatabase.H2.connect();
             PreparedStatement s = c.prepareStatement("select count(*) from itapp_processed_message where consumer = ?")) {
            s.setString(1, "it-jms");
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        }
    }

    private static void send(String body, int copies) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(BASE + "/send?copies=" + copies))
                .header("Content-Type", "text/plain").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
    }

    private static JsonArray browse(String queue, String contains) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(BASE + "/browse/" + queue + "?contains="
                + URLEncoder.encode(contains, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return Json.createReader(new StringReader(r.body())).readObject().getJsonArray("messages");
    }
}
