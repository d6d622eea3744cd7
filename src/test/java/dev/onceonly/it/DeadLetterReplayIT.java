package dev.onceonly.it;

import com.rabbitmq.client.AMQP;
import dev.onceonly.internal.rabbitmq.SignedDeadLetters;
import dev.onceonly.rabbitmq.RabbitHeaders;
import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.ServerLog;
import dev.onceonly.testing.TestRabbit;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dead letters replayed on the main test server (to the channel's own queue, keyed as first
 * published), through the test application's consumers
 * (src/test/itapp, {@code ReplayConsumers}) and the library's dead-letter operations. The ledger is
 * the test application's H2 table, purged every second with the default 7-day retention; done marks
 * of these consumers last 3 s, so after that only the ledger remembers a key.
 */
class DeadLetterReplayIT {

    static final String NAMES = TestRabbit.names(ItServer.PORT);
    static final String EXCHANGE = NAMES + ".x";
    static final Duration LIMIT = Duration.ofSeconds(60);
    static final ServerLog LOG = ServerLog.of("onceonly-it");
    /** The test application's copy-signing key (src/test/itapp's microprofile-config.properties). */
    static final String ITAPP_SIGNING_KEY = "itapp-test-only-copy-signing-key-0123456789";

    static TestRabbit rabbit;

    @BeforeAll
    static void connectedServer() throws Exception {
        rabbit = new TestRabbit();
        for (String q : new String[] {"replay-late", "replay-fixed"}) {
            await("a consumer on " + q, LIMIT, () -> rabbit.consumers(NAMES + "." + q), n -> n >= 1);
        }
    }

    @AfterAll
    static void close() throws Exception {
        ItServer.post("/dead-letters/broken?on=false");
        rabbit.close();
    }

    /**
     * Nine days ago a message was dead-lettered; its key was then processed by another copy, eight
     * and a half days ago: past the ledger's retention, its row would be purged, and a replay now
     * would find neither row nor done mark and run the key twice. While the dead letter waits, the
     * purge keeps every row from a retention before it (ONCE0804I), so the replay is acknowledged
     * as a duplicate, reported so, and never runs; once it is gone, the row is purged.
     */
    @Test
    void aLateReplayOfAKeyProcessedMeanwhileIsNeverRunTwice() throws Exception {
        String id = "late-" + UUID.randomUUID();
        String body = "{\"id\":\"" + id + "\"}";
        String letterId = "it-" + id;
        Instant nineDaysAgo = Instant.now().minus(Duration.ofDays(9));
        // The dead letter as the connector made it then, signed with the channel's key (its time is
        // the only thing made up): only a signed dead letter holds the purge back.
        Map<String, Object> headers = SignedDeadLetters.signed(Map.of("channel-name", "it-replay-late", "queue.name",
                        NAMES + ".replay-late", "host", "127.0.0.1", "username", "guest", "password", "guest",
                        "copy-signing-key", ITAPP_SIGNING_KEY),
                Map.of(RabbitHeaders.DEAD_LETTER_ID, letterId, RabbitHeaders.DEAD_LETTERED_AT, nineDaysAgo.toEpochMilli(),
                        RabbitHeaders.OUTCOME, "FAILED", RabbitHeaders.REASON, "java.lang.IllegalStateException: the stock service is down",
                        RabbitHeaders.CONSUMER, "it-replay-late", RabbitHeaders.ATTEMPTS, 3, RabbitHeaders.ORIGINAL_EXCHANGE, EXCHANGE,
                        RabbitHeaders.ORIGINAL_ROUTING_KEY, "it.replay-late", RabbitHeaders.CHANNEL, "it-replay-late"),
                body.getBytes(StandardCharsets.UTF_8));
        rabbit.publish("", NAMES + ".replay-late.dlq", new AMQP.BasicProperties.Builder().contentType("application/json")
                .headers(headers).build(), body);
        rabbit.publish(EXCHANGE, "it.replay-late", body);
        await("the other copy processed", LIMIT, () -> ItServer.effects("it-replay-late", body), n -> n == 1);
        await("its ledger row", LIMIT, () -> rows(), n -> n == 1);
        setProcessedAt(nineDaysAgo.plus(Duration.ofHours(12)));
        Thread.sleep(3_500); // the done mark expires: only the ledger remembers the key

        int mark = LOG.mark();
        String heldFor = "a dead letter from " + Instant.ofEpochMilli(nineDaysAgo.toEpochMilli());
        await("the purge held back by the dead letter", LIMIT,
                () -> LOG.linesSince(mark, "ONCE0804I").stream().filter(l -> l.contains(heldFor)).count(), n -> n >= 3);
        assertEquals(1, rows(), "the row the dead letter may need is kept past the retention");

        JsonObject result = ItServer.postJson("/dead-letters/it-replay-late/" + letterId + "/replay");
        assertEquals("ALREADY_PROCESSED", result.getString("status"), result.toString());
        assertTrue(result.getString("detail").contains("already"), result.toString());
        assertEquals(1, ItServer.effects("it-replay-late", body), "never run twice");
        assertEquals(1, ItServer.deliveries("it-replay-late", body), "the handler was not even called");
        assertEquals(0, letters("it-replay-late", "it-replay-late").size(), "the dead letter is gone");
        assertTrue(LOG.linesSince(mark, "ONCE0803I").stream().anyMatch(l -> l.contains(letterId) && l.contains("ALREADY_PROCESSED")),
                "the connector's line says so");
        await("the row purged once nothing holds it", LIMIT, () -> rows(), n -> n == 0);
    }

    /** A message that failed for a cause since fixed, replayed: processed once, and a copy after it is a duplicate. */
    @Test
    void aReplayOfAGenuinelyFailedMessageRunsOnceWhenItsCauseIsFixed() throws Exception {
        String body = "{\"id\":\"fixed-" + UUID.randomUUID() + "\"}";
        ItServer.post("/dead-letters/broken?on=true");
        rabbit.publish(EXCHANGE, "it.replay-fixed", body);
        JsonArray letters = await("the failure dead-lettered", LIMIT, () -> letters("it-replay-fixed", "it-replay-fixed"),
                a -> a.stream().anyMatch(l -> l.asJsonObject().getString("bodySha256").equals(sha256(body))));
        JsonObject letter = letters.stream().map(l -> l.asJsonObject())
                .filter(l -> l.getString("bodySha256").equals(sha256(body))).findFirst().orElseThrow();
        assertEquals("FAILED", letter.getString("outcome"));
        assertTrue(letter.getString("reason").contains("the stock service is down"), letter.toString());
        assertEquals(0, ItServer.effects("it-replay-fixed", body));

        ItServer.post("/dead-letters/broken?on=false");
        JsonObject result = ItServer.postJson("/dead-letters/it-replay-fixed/" + letter.getString("id") + "/replay");

        assertEquals("PROCESSED", result.getString("status"), result.toString());
        assertEquals(1, ItServer.effects("it-replay-fixed", body));
        assertEquals("NOT_FOUND", ItServer.postJson("/dead-letters/it-replay-fixed/" + letter.getString("id") + "/replay")
                .getString("status"), "replayed once: it left the queue");
        rabbit.publish(EXCHANGE, "it.replay-fixed", body);
        await("the copy settled", LIMIT, () -> ItServer.outcomes("it-replay-fixed").getInt("DUPLICATE"), n -> n >= 1);
        assertEquals(1, ItServer.effects("it-replay-fixed", body), "run once");
    }

    /** The library's resource, mounted by the application under a role, answers nobody unauthenticated. */
    @Test
    void theDeadLetterResourceRefusesAnUnauthenticatedCaller() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://localhost:" + ItServer.PORT + "/itapp/api/ops/dead-letters";
        for (HttpRequest r : new HttpRequest[] {
                HttpRequest.newBuilder(URI.create(base)).build(),
                HttpRequest.newBuilder(URI.create(base + "/it-replay-fixed")).build(),
                HttpRequest.newBuilder(URI.create(base + "/it-replay-fixed/replay")).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"dryRun\":true}")).build(),
                HttpRequest.newBuilder(URI.create(base + "/it-replay-fixed/some-id")).DELETE().build()}) {
            HttpResponse<String> response = http.send(r, HttpResponse.BodyHandlers.ofString());
            assertEquals(401, response.statusCode(), r.method() + " " + r.uri() + ": " + response.body());
        }
    }

    /** What a cross-site form can send (a form, or text) never reaches a state-changing call: refused for its type. */
    @Test
    void theDeadLetterResourceRefusesAFormPost() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://localhost:" + ItServer.PORT + "/itapp/api/ops/dead-letters/it-replay-fixed";
        for (String type : new String[] {"application/x-www-form-urlencoded", "text/plain"}) {
            for (String path : new String[] {"/discard", "/replay", "/some-id/replay"}) {
                HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", type)
                        .POST(HttpRequest.BodyPublishers.ofString("dry-run=false")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(415, response.statusCode(), type + " " + path + ": " + response.body());
            }
        }
    }

    private static JsonArray letters(String channel, String consumer) throws Exception {
        return ItServer.json("/dead-letters/" + channel + "?consumer=" + consumer).getJsonArray("letters");
    }

    private static int rows() throws Exception {
        try (Connection c = LedgerDatabase.H2.connect();
             PreparedStatement s = c.prepareStatement("select count(*) from itapp_processed_message where consumer = 'it-replay-late'");
             ResultSet r = s.executeQuery()) {
            r.next();
            return r.getInt(1);
        }
    }

    private static void setProcessedAt(Instant at) throws Exception {
        try (Connection c = LedgerDatabase.H2.connect();
             PreparedStatement s = c.prepareStatement("update itapp_processed_message set processed_at = ? where consumer = 'it-replay-late'")) {
            s.setTimestamp(1, Timestamp.from(at));
            assertEquals(1, s.executeUpdate());
        }
    }

    private static String sha256(String body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
