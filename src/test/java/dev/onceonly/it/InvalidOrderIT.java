package dev.onceonly.it;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.chaos.ChaosOrders;
import dev.onceonly.chaos.ChaosOrders.Invalid;
import dev.onceonly.testing.DemoClient;
import dev.onceonly.testing.ServerLog;
import dev.onceonly.testing.TestRabbit;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Invalid orders on the demo (the PostgreSQL test server, real RabbitMQ): an order of
 * {@code "quantity": -3} used to ADD three units to stock. Every kind of invalid order must leave
 * stock and shipping untouched and end in the dead-letter queue with a reason: FAILED with the
 * demo's {@code InvalidOrderException}, which its consumer declares not worth retrying
 * ({@code noRetryFor}), so after ONE attempt (it used to be tried max-attempts = 5 times), the reason
 * naming the exception's class, its message and the retry rule that matched; or REJECTED by the
 * guard when there is no key to take (no order id, no JSON). An invalid order is an expected
 * outcome: the server logs one line for it (the dead letter's, ONCE0505W, without a stack trace),
 * and Reactive Messaging, which never sees the failure, no error (it logged SRMSG00200 with a trace).
 */
class InvalidOrderIT {

    /** The PostgreSQL test server's own queue and exchange on the shared broker (pom: onceonly.it.demo.*). */
    private static final String QUEUE = TestRabbit.names(System.getProperty("http.port", "9080")) + ".postgresql.inventory";
    private static final String EXCHANGE = TestRabbit.names(System.getProperty("http.port", "9080")) + ".postgresql.orders";
    private static final Duration LIMIT = Duration.ofMinutes(2);

    @Test
    void invalidOrdersTouchNothingAndEndInTheDeadLetterQueueWithTheirReason() throws Exception {
        ServerLog log = ServerLog.of("onceonly-it-postgresql");
        int mark = log.mark();
        DemoClient demo = new DemoClient("http://localhost:" + System.getProperty("onceonly.test.postgresql.port", "9081"));
        String run = "inv-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        Map<String, Invalid> bodies = new HashMap<>();
        for (Invalid kind : Invalid.values()) {
            String id = run + kind.ordinal();
            demo.call("PUT", "/api/stock/" + id + "?quantity=100");
            bodies.put(ChaosOrders.invalidBody(kind, id), kind);
        }
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        try (Connection c = f.newConnection("onceonly-invalid-order-it"); Channel ch = c.createChannel()) {
            // A copy of every dead letter, apart from the dead-letter queue the demo's page reads.
            String audit = ch.queueDeclare("", false, true, true, null).getQueue();
            ch.queueBind(audit, QUEUE + ".dlx", "");
            ch.confirmSelect();
            AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("application/json").build();
            for (String body : bodies.keySet()) {
                ch.basicPublish(EXCHANGE, "order.placed", true, props, body.getBytes(StandardCharsets.UTF_8));
            }
            ch.waitForConfirmsOrDie(10_000);

            List<GetResponse> letters = new ArrayList<>();
            long deadline = System.nanoTime() + LIMIT.toNanos();
            while (System.nanoTime() < deadline) {
                GetResponse r = ch.basicGet(audit, true);
                if (r == null) {
                    Thread.sleep(100);
                } else if (bodies.containsKey(new String(r.getBody(), StandardCharsets.UTF_8)) && letters.add(r)
                        && letters.size() == bodies.size()) {
                    break;
                }
            }
            assertEquals(bodies.size(), letters.size(), "every invalid order dead-lettered");
            for (GetResponse r : letters) {
                Invalid kind = bodies.get(new String(r.getBody(), StandardCharsets.UTF_8));
                Map<String, Object> h = r.getProps().getHeaders();
                String outcome = String.valueOf(h.get("x-onceonly-outcome"));
                String reason = String.valueOf(h.get("x-onceonly-reason"));
                System.out.printf("InvalidOrderIT: %s -> %s after %s attempt(s): %s%n", kind, outcome, h.get("x-onceonly-attempts"), reason);
                assertEquals(kind.outcome, outcome, kind + ": " + reason);
                if (kind.outcome.equals("FAILED")) {
                    assertTrue(reason.startsWith("dev.onceonly.demo.inventory.InvalidOrderException: invalid order: "), kind + ": " + reason);
                    assertTrue(reason.endsWith("(not retried: dev.onceonly.demo.inventory.InvalidOrderException is in no-retry-for)"),
                            kind + ": " + reason);
                    assertEquals("1", String.valueOf(h.get("x-onceonly-attempts")), kind + " dead-lettered after one handler run");
                }
            }
        }
        for (Invalid kind : Invalid.values()) {
            String stock = demo.call("GET", "/api/stock/" + run + kind.ordinal());
            assertEquals(100, DemoClient.parse(stock).getJsonNumber("quantity").longValue(), kind + " changed stock: " + stock);
        }
        assertEquals(0, DemoClient.parse(demo.call("GET", "/api/shipping?prefix=" + run)).getInt("calls"), "no shipping for invalid orders");

        long failed = bodies.values().stream().filter(kind -> kind.outcome.equals("FAILED")).count();
        await("a dead letter's line for each", LIMIT, () -> log.linesSince(mark, "ONCE0505W").size(), n -> n >= bodies.size());
        List<String> lines = log.linesSince(mark, "ONCE0505W").stream().filter(l -> l.contains("outcome FAILED after 1 attempt(s)")).toList();
        assertEquals(failed, lines.size(), lines.toString());
        assertTrue(lines.stream().allMatch(l -> l.endsWith("InvalidOrderException (not retried: "
                + "dev.onceonly.demo.inventory.InvalidOrderException is in no-retry-for)")), lines.toString());
        assertEquals(List.of(), log.tracedSince(mark, "ONCE0505W"), "an expected outcome: no stack trace");
        assertEquals(List.of(), log.linesSince(mark, "ONCE0516W"), "dead-lettered at its first attempt: one line");
        // (Liberty's @Transactional, around the demo's handler, still records each exception it
        // rolls back for as a diagnostic incident: the application's choice, not the guard's.)
        assertEquals(List.of(), log.raisedSince(mark));
    }
}
