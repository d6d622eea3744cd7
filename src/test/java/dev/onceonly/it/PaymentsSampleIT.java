package dev.onceonly.it;

import com.rabbitmq.client.AMQP;
import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.TestRabbit;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The sample application (samples/payments), built from the installed library artifact alone and
 * running on a server of its own with the sample's own server.xml (the pom's it-sample-start):
 * duplicates straight from RabbitMQ are processed once, and once more after Redis forgot every
 * claim, since the ledger row committed with each payment still catches them.
 */
class PaymentsSampleIT {

    static final String NAMES = TestRabbit.names(ItServer.PORT) + ".payments";
    static final String EXCHANGE = NAMES + ".x";
    static final String QUEUE = NAMES;
    static final String JDBC_URL = "jdbc:postgresql://127.0.0.1:5432/test?currentSchema="
            + System.getProperty("onceonly.test.sample.schema", "onceonly_sample_" + ItServer.PORT);
    static final Duration LIMIT = Duration.ofSeconds(120);
    static final int PAYMENTS = 200;

    @Test
    void twoHundredPaymentsWithAHundredCopiesMakeTwoHundredRowsAndTheLedgerCatchesThemAgainWithoutRedis() throws Exception {
        try (TestRabbit rabbit = new TestRabbit(); RedisClient redis = TestRedis.client(); Connection db = connect()) {
            // The sample's consumer is up (so its tables exist); start from empty tables and queues.
            await("the sample's consumer", LIMIT, () -> consumersOf(rabbit, QUEUE), n -> n >= 1);
            try (Statement st = db.createStatement()) {
                st.executeUpdate("delete from payment");
                st.executeUpdate("delete from onceonly_processed_message");
            }
            rabbit.purge(QUEUE);
            rabbit.purge(QUEUE + ".dlq");
            deleteClaims(redis);

            String run = "pay-" + UUID.randomUUID() + "-";
            List<String> messages = new ArrayList<>();
            for (int i = 0; i < PAYMENTS; i++) {
                String payment = "{\"paymentId\":\"" + run + i + "\",\"amountCents\":" + (100 + i) + "}";
                messages.add(payment);
                if (i % 2 == 0) {
                    messages.add(payment); // a byte-identical copy, right behind the original
                }
            }
            assertEquals(PAYMENTS + 100, messages.size());
            publishAll(rabbit, messages);

            await("200 payments and 200 ledger rows", LIMIT, () -> counts(db), c -> c.equals(List.of(PAYMENTS, PAYMENTS)));
            await("every message settled", LIMIT, () -> TestRabbit.total(QUEUE), n -> n == 0);
            assertEquals(List.of(PAYMENTS, PAYMENTS), counts(db), "no payment written twice");
            assertEquals(PAYMENTS, count(db, "select count(distinct paymentId) from payment"));
            assertEquals(0, TestRabbit.total(QUEUE + ".dlq"), "nothing dead-lettered");

            // Redis forgets every claim: the ledger rows alone now keep the copies out.
            deleteClaims(redis);
            publishAll(rabbit, messages);
            await("all 300 settled again", LIMIT, () -> TestRabbit.total(QUEUE), n -> n == 0);
            assertEquals(List.of(PAYMENTS, PAYMENTS), counts(db), "the ledger caught every message again");
            assertEquals(0, TestRabbit.total(QUEUE + ".dlq"), "nothing dead-lettered");
        }
    }

    /**
     * The sample has only the features an application needs (no MicroProfile Health or Telemetry):
     * the library adds no warning or error to its server log. Before, Liberty's injection engine
     * logged CWNEN0049W for the library's health-check bean, whose API was not there.
     */
    @Test
    void theLibraryAddsNoWarningToTheServerLog() throws Exception {
        java.nio.file.Path log = java.nio.file.Path.of(System.getProperty("liberty.wlp.dir"),
                "usr/servers/onceonly-it-sample/logs/messages.log");
        // Hibernate's own error line for each duplicate the ledger catches is a known, separate matter.
        List<String> problems = java.nio.file.Files.readAllLines(log).stream()
                .filter(l -> l.contains("CWNEN0049W") || l.contains("CWWJP0015E")
                        || l.contains("dev.onceonly") && (l.contains(" W ") || l.contains(" E ")))
                .toList();
        assertEquals(List.of(), problems);
    }

    private static void publishAll(TestRabbit rabbit, List<String> messages) throws Exception {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("application/json").build();
        for (String m : messages) {
            rabbit.publish(EXCHANGE, "payment", props, m); // confirmed by the broker, one by one
        }
    }

    /** The sample's claims in the build's Redis (consumer "payments", default prefix). */
    private static void deleteClaims(RedisClient redis) {
        redis.keys("oo:payments:*").forEach(redis::del);
    }

    /** [payment rows, ledger rows]; the sample's schema holds only the sample's tables. */
    private static List<Integer> counts(Connection db) throws Exception {
        return List.of(count(db, "select count(*) from payment"),
                count(db, "select count(*) from onceonly_processed_message where consumer = 'payments'"));
    }

    private static int count(Connection db, String sql) throws Exception {
        try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static Connection connect() throws Exception {
        return DriverManager.getConnection(JDBC_URL, "postgres", "");
    }

    private static int consumersOf(TestRabbit rabbit, String queue) {
        try {
            return rabbit.consumers(queue);
        } catch (Exception notYetDeclared) {
            return 0;
        }
    }
}
