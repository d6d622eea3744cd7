package dev.onceonly.it;

import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.TestRabbit;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A guarded method called from a consumer while a delivery is being dispatched, as applications
 * write it: {@code LineService.reserve(String line)} of the test application, guarded with the
 * content of its own argument as key. Each call must be keyed on that argument, not on the
 * delivery the connector is dispatching.
 */
class NestedGuardIT {

    static final String NAMES = TestRabbit.names(ItServer.PORT);
    static final String EXCHANGE = NAMES + ".x";
    static final Duration LIMIT = Duration.ofSeconds(60);

    static TestRabbit rabbit;

    @BeforeAll
    static void connectedServer() throws Exception {
        rabbit = new TestRabbit();
        for (String q : List.of("order-lines", "nested")) {
            await("a consumer on " + q, LIMIT, () -> consumersOf(NAMES + "." + q), n -> n >= 1);
        }
    }

    @AfterAll
    static void close() throws Exception {
        rabbit.close();
    }

    @Test
    void unguardedConsumerCallingAGuardedMethodOncePerLineReservesEveryLine() throws Exception {
        String orderId = "order-" + UUID.randomUUID();
        List<String> lines = List.of(orderId + ":widget:2", orderId + ":gadget:1", orderId + ":gizmo:5");
        JsonObject before = ItServer.outcomes("it-lines");
        rabbit.publish(EXCHANGE, "it.order-lines", "{\"orderId\":\"" + orderId + "\",\"lines\":[\""
                + String.join("\",\"", lines) + "\"]}");

        await("the order's delivery", LIMIT, () -> ItServer.deliveries("it-order-lines", orderId), n -> n >= 1);
        await("the order to be acked", LIMIT, () -> TestRabbit.total(NAMES + ".order-lines"), n -> n == 0);

        List<Integer> effects = new ArrayList<>();
        for (String line : lines) {
            effects.add(ItServer.effects("it-lines", line));
        }
        JsonObject after = ItServer.outcomes("it-lines");
        assertEquals(List.of(1, 1, 1), effects, "each of the three different lines reserved once; guard outcomes of it-lines: "
                + delta(before, after));
        assertEquals(3, after.getInt("PROCESSED") - before.getInt("PROCESSED"), delta(before, after));
        assertEquals(0, after.getInt("DUPLICATE") - before.getInt("DUPLICATE"), delta(before, after));
        assertEquals(1, ItServer.deliveries("it-order-lines", orderId));
    }

    @Test
    void guardedConsumerCallingAnotherGuardedBeanWithAnotherArgumentRunsBoth() throws Exception {
        String body = "nested-" + UUID.randomUUID();
        String line = "line-of:" + body; // NestedConsumers.innerLine in the test application
        rabbit.publish(EXCHANGE, "it.nested", body);

        await("the outer consumer's effect", LIMIT, () -> ItServer.effects("it-nested", body), n -> n >= 1);
        await("the message to be acked", LIMIT, () -> TestRabbit.total(NAMES + ".nested"), n -> n == 0);

        assertEquals(1, ItServer.effects("it-nested", body), "the guarded consumer ran once");
        assertEquals(1, ItServer.effects("it-lines", line), "the guarded bean it called ran too, keyed on its own argument");
        assertEquals(1, ItServer.deliveries("it-nested", body));
    }

    private static String delta(JsonObject before, JsonObject after) {
        StringBuilder b = new StringBuilder();
        for (String outcome : after.keySet()) {
            int d = after.getInt(outcome) - before.getInt(outcome, 0);
            if (d != 0) {
                b.append(b.length() == 0 ? "" : ", ").append(outcome).append(" +").append(d);
            }
        }
        return b.toString();
    }

    static int consumersOf(String queue) {
        try {
            return rabbit.consumers(queue);
        } catch (Exception notYetDeclared) {
            return 0;
        }
    }
}
