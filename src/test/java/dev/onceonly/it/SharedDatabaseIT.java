package dev.onceonly.it;

import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.TestRabbit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Two applications on one database, each in tables of its own: on the main test server's H2, the
 * demo keeps the shipped tables and the test application beside it (src/test/itapp) sets
 * {@code onceonly.ledger.table=itapp_processed_message} and {@code onceonly.outbox.table=itapp_outbox}.
 * Both have the same key prefix, so nothing but the tables keeps them apart. The demo's outbox
 * publishes to its embedded broker, the test application's to this machine's RabbitMQ, where the
 * demo's exchange does not exist: a row one relay took from the other's table would show.
 */
class SharedDatabaseIT {

    static final String EXCHANGE = TestRabbit.names(ItServer.PORT) + ".x";
    static final String QUEUE = TestRabbit.names(ItServer.PORT) + ".shared-db";
    static final String ROUTING_KEY = "it.shared-db";
    static final Duration LIMIT = Duration.ofSeconds(90);

    @BeforeAll
    static void queue() throws Exception {
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.declareQueue(QUEUE);
            rabbit.bind(QUEUE, EXCHANGE, ROUTING_KEY);
            rabbit.purge(QUEUE);
        }
    }

    @AfterAll
    static void deleteQueue() throws Exception {
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.deleteQueue(QUEUE);
        }
    }

    /** What the test application sends is written to its table, relayed from there and marked sent there. */
    @Test
    void anApplicationsOutboxWritesAndRelaysItsOwnTable() throws Exception {
        String run = "shared-" + UUID.randomUUID();
        ItServer.post("/outbox/" + run + "?exchange=" + EXCHANGE + "&routingKey=" + ROUTING_KEY + "&count=3");
        await("three messages published", LIMIT, () -> received(run), b -> b.size() == 3);
        await("their rows marked sent", LIMIT, () -> count("select count(*) from itapp_outbox where message_id like ? and state = 1",
                run + "%"), n -> n == 3);
        assertEquals(0, count("select count(*) from onceonly_outbox where message_id like ?", run + "%"), "nothing in the demo's table");
        assertEquals(List.of(run + "-0", run + "-1", run + "-2"), received(run).stream().sorted().toList());
    }

    /**
     * Each sweep takes the pending rows of its application's table only: a row written straight into
     * the test application's table goes out to RabbitMQ once and is marked sent with no refusal; a row
     * for the same exchange written into the demo's table is tried by the demo's relay on its broker,
     * which refuses it, and never reaches RabbitMQ.
     */
    @Test
    void eachSweepTakesTheRowsOfItsOwnTable() throws Exception {
        String run = "swept-" + UUID.randomUUID();
        long longAgo = System.currentTimeMillis() - Duration.ofHours(1).toMillis();
        insertPending("itapp_outbox", run + "-itapp", longAgo);
        insertPending("onceonly_outbox", run + "-demo", longAgo);
        try {
            await("the demo's relay tried its row", LIMIT,
                    () -> count("select count(*) from onceonly_outbox where message_id = ? and attempts > 0", run + "-demo"), n -> n == 1);
            await("the test application's row sent", LIMIT,
                    () -> count("select count(*) from itapp_outbox where message_id = ? and state = 1 and attempts = 0", run + "-itapp"),
                    n -> n == 1);
            await("its message published", LIMIT, () -> received(run), b -> b.equals(List.of(run + "-itapp")));
            assertEquals(List.of(run + "-itapp"), received(run), "published once, the demo's row not at all");
        } finally {
            // The demo's relay would go on trying it, and park it.
            try (Connection c = LedgerDatabase.H2.connect();
                 PreparedStatement s = c.prepareStatement("delete from onceonly_outbox where message_id = ?")) {
                s.setString(1, run + "-demo");
                s.executeUpdate();
            }
        }
    }

    /** The test application's purge deletes its old ledger rows from its own table. */
    @Test
    void anApplicationsPurgeWorksOnItsOwnLedgerTable() throws Exception {
        // A key shaped as the guard makes them: the default prefix, a consumer, ':' and a 22-character digest.
        String key = "oo:it-shared:" + UUID.randomUUID().toString().replace("-", "").substring(0, 22);
        try (Connection c = LedgerDatabase.H2.connect(); PreparedStatement s = c.prepareStatement("insert into itapp_processed_message"
                + " (msg_id, consumer, body_sha256, processed_at) values (?, 'it-shared', '', timestamp with time zone"
                + " '2000-01-01 00:00:00+00')")) {
            s.setString(1, key);
            s.executeUpdate();
        }
        await("the old row purged", LIMIT, () -> count("select count(*) from itapp_processed_message where msg_id = ?", key),
                n -> n == 0);
    }

    /** What this test took from the queue so far (JUnit makes an instance per test). */
    private final List<String> taken = new ArrayList<>();

    /** The bodies of {@code run} published so far: what is in the queue now is taken, and kept. */
    private List<String> received(String run) throws Exception {
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.drain(QUEUE).forEach(r -> taken.add(new String(r.getBody(), StandardCharsets.UTF_8)));
        }
        return taken.stream().filter(b -> b.startsWith(run)).toList();
    }

    /** A pending row as the outbox writes them, of the default scope, sending {@code messageId} as its text. */
    private static void insertPending(String table, String messageId, long createdAt) throws Exception {
        try (Connection c = LedgerDatabase.H2.connect(); PreparedStatement s = c.prepareStatement("insert into " + table
                + " (message_id, source_key, exchange_name, routing_key, content_type, persistent, headers, body, state,"
                + " created_at, attempts, app_scope) values (?, ?, ?, ?, 'text/plain', true, '{}', ?, 0, ?, 0, 'oo:')")) {
            s.setString(1, messageId);
            s.setString(2, messageId);
            s.setString(3, EXCHANGE);
            s.setString(4, ROUTING_KEY);
            s.setBytes(5, messageId.getBytes(StandardCharsets.UTF_8));
            s.setLong(6, createdAt);
            s.executeUpdate();
        }
    }

    private static int count(String sql, String parameter) throws Exception {
        try (Connection c = LedgerDatabase.H2.connect(); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, parameter);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
