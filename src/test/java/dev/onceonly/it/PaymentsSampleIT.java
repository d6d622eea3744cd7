package dev.onceonly.it;

import com.rabbitmq.client.AMQP;
import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.TestRabbit;
import dev.onceonly.testing.TestRedis;
import dev.onceonly.rabbitmq.RabbitHeaders;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sample application (samples/payments), built from the installed library artifact alone and
 * running on a server of its own with the sample's own server.xml (the pom's it-sample-start):
 * duplicates straight from RabbitMQ are processed once, and once more after Redis forgot every
 * claim, since the ledger row committed with each payment still catches them. In order: the log
 * after startup, the payments, then refusals and the log after all of it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PaymentsSampleIT {

    static final Duration LIMIT = Duration.ofSeconds(120);
    static final int PAYMENTS = 200;
    /** A messages.log line: {@code [date] thread logger L message}, with the logger and the level L. */
    static final Pattern LEVELLED_LINE = Pattern.compile("^\\[[^\\]]*\\] \\S+ (\\S+)\\s+([A-Z]) .*");
    /** Loggers of the library and of what it ships in WEB-INF/lib. */
    static final List<String> LIBRARY_LOGGERS = List.of("dev.onceonly", "org.hibernate", "redis.clients", "com.rabbitmq",
            "com.github.benmanes");
    /** Hibernate's deprecation of the two enhancer properties a unit needs while Hibernate is in WEB-INF/lib. */
    static final Pattern ENHANCER_DEPRECATION = Pattern.compile(
            "HHH90000029: The \\[hibernate\\.enhancer\\.(enableDirtyTracking|enableLazyInitialization)\\]");
    /** A messages.log line at ERROR level: {@code [date] thread logger E message}. */
    static final Pattern ERROR_LINE = Pattern.compile("^\\[[^\\]]*\\] \\S+ \\S+\\s+E .*");

    /**
     * Where one running copy of the sample is.
     *
     * @param server    the Liberty server's name in the build
     * @param names     the prefix of its exchange and queue names ({@code <names>.x}, {@code <names>})
     * @param schema    its PostgreSQL schema
     * @param keyPrefix its claim keys' prefix ({@code onceonly.key-prefix})
     */
    record Sample(String server, String names, String schema, String keyPrefix) {
        String exchange() {
            return names + ".x";
        }

        String jdbcUrl() {
            return "jdbc:postgresql://127.0.0.1:5432/test?currentSchema=" + schema;
        }

        /** {@return the sample on {@code server}, its names under the build's, its schema the one the pom passes as {@code schemaProperty}} */
        static Sample on(String server, String names, String schemaProperty, String keyPrefix) {
            return new Sample(server, TestRabbit.names(ItServer.PORT) + "." + names, System.getProperty(schemaProperty), keyPrefix);
        }
    }

    /** The sample on its own server with the sample's server.xml as it ships (pom: it-sample-start). */
    Sample sample() {
        return Sample.on("onceonly-it-sample", "payments", "onceonly.test.sample.schema", "oo:");
    }

    @Test
    @Order(2)
    void twoHundredPaymentsWithAHundredCopiesMakeTwoHundredRowsAndTheLedgerCatchesThemAgainWithoutRedis() throws Exception {
        String queue = sample().names();
        try (TestRabbit rabbit = new TestRabbit(); RedisClient redis = TestRedis.client(); Connection db = connect()) {
            // The sample's consumer is up (so its tables exist); start from empty tables and queues.
            await("the sample's consumer", LIMIT, () -> consumersOf(rabbit, queue), n -> n >= 1);
            try (Statement st = db.createStatement()) {
                st.executeUpdate("delete from payment");
                st.executeUpdate("delete from onceonly_processed_message");
            }
            rabbit.purge(queue);
            rabbit.purge(queue + ".dlq");
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
            await("every message settled", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
            assertEquals(List.of(PAYMENTS, PAYMENTS), counts(db), "no payment written twice");
            assertEquals(PAYMENTS, count(db, "select count(distinct paymentId) from payment"));
            assertEquals(0, TestRabbit.total(queue + ".dlq"), "nothing dead-lettered");

            // Redis forgets every claim: the ledger rows alone now keep the copies out.
            deleteClaims(redis);
            publishAll(rabbit, messages);
            await("all 300 settled again", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
            assertEquals(List.of(PAYMENTS, PAYMENTS), counts(db), "the ledger caught every message again");
            assertEquals(0, TestRabbit.total(queue + ".dlq"), "nothing dead-lettered");
        }
    }

    /**
     * The sample has only the features an application needs (no MicroProfile Health or Telemetry):
     * the library and what it brings into WEB-INF/lib add no warning or error to its server log.
     * Before, Liberty's injection engine logged CWNEN0049W for the library's health-check bean,
     * whose API was not there; Liberty logged CWWJP0015E for the persistence unit the library jar
     * shipped (its datasource jdbc/onceonly does not exist here: the sample's is jdbc/payments).
     * One warning stays, and only it is let through: Hibernate 6.6's HHH90000029 for the two enhancer
     * properties the sample's unit sets to false. Hibernate logs it whenever either is false, and
     * with both true (their default) Liberty runs Hibernate's class transformer over Hibernate's
     * own classes in WEB-INF/lib: CWWJP0055E, a StackOverflowError, and the application does not start.
     */
    @Test
    @Order(1)
    void theLibraryAddsNoWarningToTheServerLog() throws Exception {
        List<String> problems = serverLog().stream()
                .filter(l -> l.contains("CWNEN0049W") || l.contains("CWWJP0015E") || fromTheLibrary(l))
                .toList();
        assertEquals(List.of(), problems);
    }

    /** A W or E line of a logger of the library or of a library it ships (Hibernate, Jedis, amqp-client, Caffeine). */
    private static boolean fromTheLibrary(String line) {
        Matcher m = LEVELLED_LINE.matcher(line);
        return m.matches() && (m.group(2).equals("W") || m.group(2).equals("E"))
                && LIBRARY_LOGGERS.stream().anyMatch(m.group(1)::startsWith) && !ENHANCER_DEPRECATION.matcher(line).find();
    }

    /**
     * Outcomes the library handles are never logged as errors, by anyone: after the ledger caught
     * 300 duplicates (the payments test), a CONFLICT (same payment id, another amount) and a
     * REJECTED (no payment id) end in the dead-letter queue with their outcome, payments published
     * during a Redis outage are refused (RETRY) until it ends and then processed, and the server
     * log holds no ERROR line at all. Before, Hibernate logged each ledger duplicate as an ERROR, and
     * Reactive Messaging each refusal (SRMSG00200, with a stack trace).
     */
    @Test
    @Order(3)
    void refusalsAndLedgerDuplicatesLeaveNoErrorInTheServerLog() throws Exception {
        String queue = sample().names();
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.purge(queue + ".dlq");
            String id = "pay-refused-" + UUID.randomUUID();
            publishAll(rabbit, List.of("{\"paymentId\":\"" + id + "\",\"amountCents\":100}",
                    "{\"paymentId\":\"" + id + "\",\"amountCents\":999}",
                    "{\"amountCents\":5}"));
            await("the conflict and the keyless payment dead-lettered", LIMIT, () -> TestRabbit.total(queue + ".dlq"), n -> n == 2);
            List<String> outcomes = rabbit.drain(queue + ".dlq").stream()
                    .map(r -> r.getProps().getHeaders().get(RabbitHeaders.OUTCOME).toString()).sorted().toList();
            assertEquals(List.of("CONFLICT", "REJECTED"), outcomes);

            // A Redis outage: every claim times out meanwhile and the guard refuses (RETRY, requeued)
            // until Redis answers again; then each payment is processed once.
            String outage = "pay-outage-" + UUID.randomUUID() + "-";
            try (RedisClient redis = TestRedis.client()) {
                // Longer than two socket timeouts (2 s each): a claim retried once still fails.
                redis.sendCommand(Protocol.Command.CLIENT, "PAUSE", "8000", "ALL");
            }
            List<String> during = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                during.add("{\"paymentId\":\"" + outage + i + "\",\"amountCents\":" + (10 + i) + "}");
            }
            publishAll(rabbit, during);
            try (Connection db = connect()) {
                await("the payments published during the outage, processed after it", LIMIT,
                        () -> count(db, "select count(*) from payment where paymentId like '" + outage + "%'"), n -> n == 5);
            }
            await("every message settled", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
            assertEquals(0, TestRabbit.total(queue + ".dlq"), "nothing dead-lettered by the outage");
            assertTrue(serverLog().stream().anyMatch(l -> l.contains("ONCE0101W")), "the outage reached the guard (ONCE0101W)");
        }
        List<String> errors = serverLog().stream().filter(l -> ERROR_LINE.matcher(l).matches()).toList();
        assertEquals(List.of(), errors, "ERROR lines in the sample's server log");
    }

    /**
     * Nothing the library brings writes to standard error, which Liberty logs as {@code SystemErr}
     * lines: read after all the sample went through, when every library it ships has been loaded.
     * Before, SLF4J (which Jedis and amqp-client log through) printed "No SLF4J providers were
     * found" there, since the library ships no SLF4J provider, as SLF4J asks of libraries; the
     * sample names one (slf4j-nop: Jedis's own warning during a Redis outage would otherwise be a W
     * line beside OnceOnly's {@code ONCE0101W}, which {@link #theLibraryAddsNoWarningToTheServerLog} refuses).
     */
    @Test
    @Order(4)
    void nothingOnStandardError() throws Exception {
        List<String> stderr = serverLog().stream().filter(l -> {
            Matcher m = LEVELLED_LINE.matcher(l);
            return m.matches() && m.group(1).equals("SystemErr");
        }).toList();
        assertEquals(List.of(), stderr, "SystemErr lines in the sample's server log");
    }

    List<String> serverLog() throws Exception {
        return Files.readAllLines(Path.of(System.getProperty("liberty.wlp.dir"), "usr/servers", sample().server(), "logs/messages.log"));
    }

    private void publishAll(TestRabbit rabbit, List<String> messages) throws Exception {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("application/json").build();
        for (String m : messages) {
            rabbit.publish(sample().exchange(), "payment", props, m); // confirmed by the broker, one by one
        }
    }

    /** The sample's claims in the build's Redis (consumer "payments"). */
    private void deleteClaims(RedisClient redis) {
        redis.keys(sample().keyPrefix() + "payments:*").forEach(redis::del);
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

    private Connection connect() throws Exception {
        return DriverManager.getConnection(sample().jdbcUrl(), "postgres", "");
    }

    private static int consumersOf(TestRabbit rabbit, String queue) {
        try {
            return rabbit.consumers(queue);
        } catch (Exception notYetDeclared) {
            return 0;
        }
    }
}
