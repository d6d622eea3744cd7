package dev.onceonly.it;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.engine.MessageKey;
import dev.onceonly.testing.TestRedis;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The ledger on a real Liberty server and a real database, driven through the demo's payments
 * (a guarded method writing a charge row in the same transaction as the ledger row). Every check
 * reads the real state: rows in the database, keys in Redis. One subclass per database.
 */
abstract class LedgerContract {

    static final HttpClient HTTP = HttpClient.newHttpClient();
    /** Bound on waiting for a state the test expects to come (never a timing assertion). */
    static final Duration PATIENCE = Duration.ofSeconds(60);

    static RedisClient redis;

    final LedgerDatabase db;

    LedgerContract(LedgerDatabase db) {
        this.db = db;
    }

    @BeforeAll
    static void connectRedis() {
        redis = TestRedis.client();
    }

    @AfterAll
    static void closeRedis() {
        redis.close();
    }

    @Test
    void sameMessageTwiceIsChargedOnceAndTheLedgerHoldsIt() throws Exception {
        Payment p = Payment.of(10);
        HttpResponse<String> first = post(p.body);
        assertOutcome(200, "PROCESSED", first);
        awaitClaimDone(p.key.storeKey());
        assertReplayOf(first, post(p.body));

        assertEquals(1, charges(p.id));
        assertEquals(p.key.comparedHashHex(), ledgerHash(p.key.storeKey()), "ledger row with the body hash");
        assertEquals("D", claim(p.key.storeKey()), "claim DONE");
    }

    @Test
    void ledgerCatchesADuplicateTheClaimStoreForgot() throws Exception {
        Payment p = Payment.of(10);
        HttpResponse<String> first = post(p.body);
        assertOutcome(200, "PROCESSED", first);
        forgetClaim(p.key.storeKey()); // as after a FLUSHALL, an eviction or a failover

        // The ledger's row holds the first answer's receipt: the duplicate it caught gets it again.
        assertReplayOf(first, post(p.body));
        assertEquals(1, charges(p.id));
        // The ledger's answer is written back, so the next duplicate stops at the claim store.
        awaitClaimDone(p.key.storeKey());
    }

    @Test
    void sameKeyWithAnotherBodyIsAConflictEvenWhenTheClaimStoreForgot() throws Exception {
        Payment p = Payment.of(10);
        assertOutcome(200, "PROCESSED", post(p.body));
        forgetClaim(p.key.storeKey());

        assertOutcome(422, "CONFLICT", post(p.with(", \"amount\": 99")));
        assertEquals(1, charges(p.id));
        assertEquals(p.key.comparedHashHex(), ledgerHash(p.key.storeKey()), "the first body's row stays");
        assertNull(claim(p.key.storeKey()), "claim released");
    }

    @Test
    void handlerThatThrowsRollsBackAndReleasesTheClaimSoTheRetryCharges() throws Exception {
        Payment p = Payment.of(10);
        assertOutcome(503, "FAILED", post(p.with(", \"fail\": true")));
        assertEquals(0, charges(p.id), "the charge written before the failure is rolled back");
        assertNull(ledgerHash(p.key.storeKey()), "no ledger row");
        assertNull(claim(p.key.storeKey()), "claim released");

        assertOutcome(200, "PROCESSED", post(p.body));
        assertEquals(1, charges(p.id));
    }

    @Test
    void transactionMarkedRollbackOnlyFailsAtCommitAndReleasesTheClaim() throws Exception {
        Payment p = Payment.of(10);
        assertOutcome(503, "FAILED", post(p.with(", \"veto\": true")));
        assertEquals(0, charges(p.id));
        assertNull(ledgerHash(p.key.storeKey()), "no ledger row");
        assertNull(claim(p.key.storeKey()), "claim released");

        assertOutcome(200, "PROCESSED", post(p.body));
        assertEquals(1, charges(p.id));
    }

    /**
     * The server's purge deletes its own application's rows past retention (keys under its key
     * prefix, {@code oo:}), keeps those within it, and leaves another application's rows in the same
     * table alone, however old.
     */
    @Test
    void purgeDeletesOnlyItsOwnRowsPastRetention() throws Exception {
        // The IT servers purge every second, two rows per transaction, with the default 7-day retention.
        String consumer = "purge-it-" + UUID.randomUUID().toString().substring(0, 8);
        String mine = "oo:" + consumer + ":";
        String others = "other-app:" + consumer + ":";
        Instant now = Instant.now();
        try (Connection c = db.connect();
             PreparedStatement insert = c.prepareStatement("insert into onceonly_processed_message"
                     + " (msg_id, consumer, body_sha256, processed_at) values (?, ?, ?, ?)")) {
            for (int i = 0; i < 9; i++) {
                boolean pastRetention = i < 5 || i > 6; // a day past retention, or a day short of it
                // Shaped like the engine's keys: <prefix><consumer>:<22-character digest>.
                String digest = UUID.randomUUID().toString().replace("-", "").substring(0, 22);
                insert.setString(1, (i < 7 ? mine : others) + digest);
                insert.setString(2, consumer);
                insert.setString(3, "0".repeat(64));
                insert.setTimestamp(4, Timestamp.from(now.minus(Duration.ofDays(pastRetention ? 8 : 6))));
                insert.executeUpdate();
            }
        }
        String count = "select count(*) from onceonly_processed_message where msg_id like ?";
        awaitTrue(() -> count(count, mine + "%") == 2, "this application's rows past retention purged");
        assertEquals(2, count(count, others + "%"), "another application's rows kept, however old");
        try (Connection c = db.connect();
             PreparedStatement delete = c.prepareStatement("delete from onceonly_processed_message where consumer = ?")) {
            delete.setString(1, consumer);
            delete.executeUpdate();
        }
    }

    /**
     * The transactional outbox on this server's database and broker: a committed charge's three
     * notifications are published once, with the message ids derived from its guard key, and their
     * rows are marked sent; a duplicate of the payment sends nothing more.
     */
    @Test
    void aCommittedChargesNotificationsArePublishedOnceWithTheirDerivedIds() throws Exception {
        try (Notifications seen = new Notifications(db)) {
            Payment p = Payment.of(10);
            HttpResponse<String> first = post(p.with(", \"notify\": 3"));
            assertOutcome(200, "PROCESSED", first);
            String key = p.key.storeKey();
            assertEquals(Map.of(key + "/1", 1, key + "/2", 1, key + "/3", 1), seen.await(3));
            assertReplayOf(first, post(p.with(", \"notify\": 3")));
            assertEquals(Map.of(key + "/1", 1, key + "/2", 1, key + "/3", 1), seen.await(3), "the duplicate sent nothing");
            awaitTrue(() -> count("select count(*) from onceonly_outbox where source_key = ? and state = 1", key) == 3,
                    "the three rows marked sent");
            // Readiness shows the rows the last sweep counted beside the outbox's status.
            HttpResponse<String> ready = HTTP.send(HttpRequest.newBuilder(URI.create(db.baseUrl().replace("/api", "/health/ready")))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertTrue(ready.body().contains("\"outbox\":\"UP\"") && ready.body().contains("\"outbox:pending\":\"")
                    && ready.body().contains("\"outbox:parked\":\""), ready.body());
        }
    }

    /** A charge that fails after its notifications were sent rolls them back with it: nothing is published. */
    @Test
    void aChargeThatFailsAfterSendingPublishesNothing() throws Exception {
        try (Notifications seen = new Notifications(db)) {
            Payment p = Payment.of(10);
            assertOutcome(503, "FAILED", post(p.with(", \"notify\": 2, \"fail\": true")));
            assertOutcome(503, "FAILED", post(p.with(", \"notify\": 2, \"veto\": true")));
            String key = p.key.storeKey();
            assertEquals(0, count("select count(*) from onceonly_outbox where source_key = ?", key), "no row");
            // The control: the same payment charged for real notifies; nothing of the failed tries comes before it.
            assertOutcome(200, "PROCESSED", post(p.with(", \"notify\": 1")));
            assertEquals(Map.of(key + "/1", 1), seen.await(1));
        }
    }

    // ---- helpers ----

    /**
     * The claim of {@code storeKey} in the server's claim store: {@code "D"} done, {@code "P"} in
     * progress, {@code null} absent (or expired).
     */
    String claim(String storeKey) throws SQLException {
        if (!db.databaseStore()) {
            String value = redis.get(storeKey);
            // A done content key is "1", any other done key "D<fingerprint>", in progress "P<token>|...".
            return value == null ? null : value.equals("1") ? "D" : value.substring(0, 1);
        }
        try (Connection c = db.connect();
             PreparedStatement s = c.prepareStatement("select state, expires_at from onceonly_claim where claim_key = ?")) {
            s.setString(1, storeKey);
            try (ResultSet r = s.executeQuery()) {
                return !r.next() || r.getLong(2) <= System.currentTimeMillis() ? null : r.getInt(1) == 1 ? "D" : "P";
            }
        }
    }

    /**
     * Waits for the done mark of {@code storeKey}. With the ledger on it is written after the call
     * returns, off the caller's thread (a copy arriving before it is BUSY): a test about a done key
     * waits for it rather than race it.
     */
    void awaitClaimDone(String storeKey) throws Exception {
        awaitTrue(() -> "D".equals(claim(storeKey)), "claim " + storeKey + " DONE");
    }

    /**
     * Makes the claim store forget the done key {@code storeKey}, as a Redis FLUSHALL, eviction or
     * failover would: first waits for its done mark, which would otherwise take the key again.
     */
    void forgetClaim(String storeKey) throws Exception {
        awaitClaimDone(storeKey);
        if (!db.databaseStore()) {
            redis.del(storeKey);
            return;
        }
        try (Connection c = db.connect(); PreparedStatement s = c.prepareStatement("delete from onceonly_claim where claim_key = ?")) {
            s.setString(1, storeKey);
            s.executeUpdate();
        }
    }

    /** A queue of the test's own, bound to the demo's exchange for payment.notified: message id → copies. */
    static final class Notifications implements AutoCloseable {
        private final com.rabbitmq.client.Connection connection;
        private final Channel channel;
        private final String queue;
        private final Map<String, Integer> copies = new TreeMap<>();

        Notifications(LedgerDatabase db) throws Exception {
            ConnectionFactory f = new ConnectionFactory();
            f.setHost("127.0.0.1");
            f.setPort(db.amqpPort());
            connection = f.newConnection("onceonly-it-notifications");
            channel = connection.createChannel();
            queue = channel.queueDeclare("", false, true, true, null).getQueue();
            channel.exchangeDeclarePassive(db.exchange());
            channel.queueBind(queue, db.exchange(), "payment.notified");
        }

        /** Waits for {@code distinct} message ids, then a little longer for copies that should not come. */
        Map<String, Integer> await(int distinct) throws Exception {
            awaitTrue(() -> {
                drain();
                return copies.size() >= distinct;
            }, distinct + " notification(s)");
            Thread.sleep(1_000);
            drain();
            return Map.copyOf(copies);
        }

        private void drain() throws IOException {
            for (GetResponse r = channel.basicGet(queue, true); r != null; r = channel.basicGet(queue, true)) {
                copies.merge(r.getProps().getMessageId(), 1, Integer::sum);
            }
        }

        @Override
        public void close() throws Exception {
            connection.close();
        }
    }

    /** A payment message of the demo's "payments" consumer, and its guard key. */
    record Payment(String id, String body, MessageKey key) {

        static final KeyDeriver KEYS = new KeyDeriver("oo:");
        static final ConsumerSettings PAYMENTS = Settings.withKey(
                Settings.defaults("payments", KeyStrategy.CONTENT), KeyStrategy.JSON_POINTER, false, "/paymentId");

        static Payment of(long amount) {
            String id = "p-" + UUID.randomUUID();
            String body = body(id, amount);
            return new Payment(id, body, KEYS.derive(PAYMENTS,
                    MessageView.of("", "", null, Map.of(), body.getBytes(StandardCharsets.UTF_8)), null));
        }

        /**
         * Waits for this payment's done mark in Redis. The payments consumer keeps a ledger, so the
         * mark follows the response by a few milliseconds; a copy sent before it is BUSY (409), not
         * the duplicate or conflict a test of those is about.
         */
        void awaitDoneInRedis() throws Exception {
            try (RedisClient redis = TestRedis.client()) {
                awaitTrue(() -> {
                    String v = redis.get(key.storeKey());
                    return v != null && v.startsWith("D");
                }, "the done mark of " + id);
            }
        }

        private static String body(String id, long amount) {
            return "{\"paymentId\": \"" + id + "\", \"amount\": " + amount + "}";
        }

        /** The same payment id with another amount: the same key, another body. */
        String withAmount(long amount) {
            return body(id, amount);
        }

        /** The same payment id with more fields: the same key, another body. */
        String with(String fields) {
            return body.substring(0, body.length() - 1) + fields + "}";
        }
    }

    HttpResponse<String> post(String body) throws Exception {
        return postAsync(body).get();
    }

    CompletableFuture<HttpResponse<String>> postAsync(String body) {
        return HTTP.sendAsync(HttpRequest.newBuilder(URI.create(db.baseUrl() + "/payments"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * {@code again} is the answer of a retried POST: the first one's status and body again (the
     * receipt the guard kept), with the demo's replay header.
     */
    static void assertReplayOf(HttpResponse<String> first, HttpResponse<String> again) {
        assertEquals(first.statusCode(), again.statusCode(), again.body());
        assertEquals(first.body(), again.body(), "the replayed body");
        assertEquals(java.util.Optional.of("true"), again.headers().firstValue("Idempotent-Replayed"), "the replay header");
    }

    static void assertOutcome(int status, String outcome, HttpResponse<String> response) {
        assertEquals(status, response.statusCode(), response.body());
        assertTrue(response.body().contains("\"outcome\":\"" + outcome + "\""), response.body());
    }

    int charges(String paymentId) throws SQLException {
        return count("select count(*) from demo_charge where payment_id = ?", paymentId);
    }

    /** The body hash of the ledger row of {@code key}, or null when there is no row. */
    String ledgerHash(String key) throws SQLException {
        try (Connection c = db.connect();
             PreparedStatement s = c.prepareStatement("select body_sha256 from onceonly_processed_message where msg_id = ?")) {
            s.setString(1, key);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? r.getString(1) : null;
            }
        }
    }

    int count(String sql, String parameter) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, parameter);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }

    @FunctionalInterface
    interface Check {
        boolean holds() throws Exception;
    }

    /** Waits until {@code check} holds; fails after {@link #PATIENCE}. */
    static void awaitTrue(Check check, String what) throws Exception {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!check.holds()) {
            if (System.nanoTime() > deadline) {
                fail("never happened: " + what);
            }
            Thread.sleep(100);
        }
    }
}
