package dev.onceonly.it;

import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.TestRabbit;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * Stops the integration-test server while messages are in flight and starts it again: every
 * message is processed exactly once across both lives of the server. The consumer's effect is a
 * counter per message in Redis, so it survives the restart. (This is the build's second Liberty
 * start; the others share the first.)
 */
class RabbitRestartIT {

    static final String QUEUE = TestRabbit.names(ItServer.PORT) + ".restart";
    static final Duration LIMIT = Duration.ofSeconds(120);

    @Test
    void messagesInFlightWhenTheServerStopsAreProcessedExactlyOnceAfterTheRestart() throws Exception {
        // The Redis hash the test application's RestartConsumer counts its effects in.
        String effects = "oo-it:restart-effects:" + ItServer.PORT;
        String run = "restart-" + UUID.randomUUID() + "-";
        int count = 150;
        try (TestRabbit rabbit = new TestRabbit(); RedisClient redis = TestRedis.client()) {
            await("the consumer", LIMIT, () -> rabbit.consumers(QUEUE), n -> n >= 1);
            for (int i = 0; i < count; i++) {
                rabbit.publish(TestRabbit.names(ItServer.PORT) + ".x", "it.restart", run + i);
            }
            int beforeStop = await("some messages processed", LIMIT, () -> processed(redis, effects, run).size(), n -> n >= 15);

            server("stop");
            int leftAtStop = TestRabbit.total(QUEUE);
            assertTrue(leftAtStop > 0 && leftAtStop < count, "stopped mid-stream: " + leftAtStop + " left");

            server("start");
            Map<String, String> done = await("every message processed", LIMIT, () -> processed(redis, effects, run),
                    m -> m.size() == count);
            List<String> twice = new ArrayList<>();
            done.forEach((body, n) -> {
                if (!n.equals("1")) {
                    twice.add(body + "=" + n);
                }
            });
            assertEquals(List.of(), twice, "messages processed more than once");
            await("the queue to be empty", LIMIT, () -> TestRabbit.total(QUEUE), n -> n == 0);
            assertEquals(0, TestRabbit.total(QUEUE + ".dlq"));
            // The first server drained its channel on the way down (rather than dying with it).
            assertTrue(serverLog().contains("ONCE0507I: RabbitMQ channel 'it-restart' stopped"), "drain logged");
            // Both applications are back, for the tests that run after this one: the demo started
            // 193 s after the restart once on a loaded machine, after the test application.
            await("the applications", Duration.ofMinutes(5), () -> reachable(), ok -> ok);
            System.out.printf("Restart: %d of %d processed when the stop began, %d left in the queue after it; all %d processed once%n",
                    beforeStop, count, leftAtStop, done.size());
            redis.hdel(effects, done.keySet().toArray(String[]::new));
        }
    }

    private static Map<String, String> processed(RedisClient redis, String key, String run) {
        Map<String, String> mine = new HashMap<>();
        redis.hgetAll(key).forEach((body, n) -> {
            if (body.startsWith(run)) {
                mine.put(body, n);
            }
        });
        return mine;
    }

    /** Whether the test application and the demo both answer. */
    private static boolean reachable() {
        try {
            ItServer.get("/outcomes/it-restart");
            HttpResponse<Void> demo = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://localhost:" + ItServer.PORT + "/api/stats")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.discarding());
            return demo.statusCode() == 200;
        } catch (Exception e) {
            return false;
        }
    }

    /** Every messages log of the test server, the ones rotated at the restart included. */
    private static String serverLog() throws Exception {
        Path logs = wlp().resolve("usr/servers/onceonly-it/logs");
        StringBuilder all = new StringBuilder();
        try (var files = Files.list(logs)) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith("messages")).toList()) {
                all.append(Files.readString(f));
            }
        }
        return all.toString();
    }

    private static Path wlp() {
        return Path.of(System.getProperty("liberty.wlp.dir", "target/liberty/wlp"));
    }

    /** Runs Liberty's own {@code server stop|start} on the test server the build created. */
    private static void server(String action) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(wlp().resolve("bin/server").toString(), action, "onceonly-it")
                .redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), "server " + action + ": " + out);
    }
}
