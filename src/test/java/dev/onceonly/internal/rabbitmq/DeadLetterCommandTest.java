package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.rabbitmq.RabbitHeaders;
import dev.onceonly.testing.Script;
import dev.onceonly.testing.TestRabbit;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/onceonly-dlq} against the machine's RabbitMQ, on a channel's dead-letter queue read
 * from the application's properties file: listing and showing take nothing away and print no body
 * unless asked, a dry run changes nothing, a replay goes back to the original queue, marked.
 */
class DeadLetterCommandTest {

    private static final Path SCRIPT = Path.of("bin", "onceonly-dlq");

    @Test
    void listsShowsReplaysAndDiscardsFromTheApplicationsProperties() throws Exception {
        String queue = "onceonly.dlq-command-test." + UUID.randomUUID();
        String dlq = queue + ".dlq";
        Path properties = Files.createTempFile("onceonly-dlq", ".properties");
        Files.writeString(properties, "mp.messaging.incoming.orders.connector=onceonly-rabbitmq\n"
                + "mp.messaging.incoming.orders.queue.name=" + queue + "\n"
                + "mp.messaging.incoming.orders.copy-signing-key=" + TestChannelConfig.SIGNING_KEY + "\n"
                + "mp.messaging.outgoing.out.connector=onceonly-rabbitmq\n");
        IncomingSettings settings = TestChannelConfig.of(Map.of("channel-name", "orders", "queue.name", queue),
                ChannelConfig.Direction.INCOMING).incoming();
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        try (Connection c = f.newConnection("dlq-command-test"); TestRabbit rabbit = new TestRabbit()) {
            try {
                Topology.declare(c, c.createChannel(), settings).close();
                HeaderSignature signature = HeaderSignature.deadLetters(CopySignature.of(settings));
                rabbit.publish("", dlq, letter(signature, "dl-failed", "FAILED", "java.lang.IllegalStateException: down", queue,
                        "{\"id\":\"secret-1\"}"), "{\"id\":\"secret-1\"}");
                rabbit.publish("", dlq, letter(signature, "dl-rejected", "REJECTED", "no key", queue, "not json"), "not json");

                List<String> listed = run(0, properties, "list");
                assertTrue(listed.get(0).startsWith("channel orders, dead-letter queue " + dlq + " on amqp://guest@"), listed.toString());
                assertEquals("2 dead letter(s), 2 matching, showing 2 from 0", listed.get(1));
                assertTrue(listed.get(2).startsWith("dl-failed  FAILED  attempts 3  consumer inventory  at 2026-"), listed.get(2));
                assertTrue(listed.get(2).endsWith("java.lang.IllegalStateException: down"), listed.get(2));
                assertFalse(String.join("\n", listed).contains("secret"), "no body: " + listed);
                assertEquals(2, TestRabbit.total(dlq), "listing takes nothing away");
                assertEquals(3, run(0, properties, "list", "--outcome", "rejected").size());

                List<String> shown = run(0, properties, "show", "dl-failed");
                assertTrue(shown.contains("verified: yes"), shown.toString());
                assertTrue(shown.contains("replay: to the channel's queue, as published to exchange '', routing key '" + queue + "'"),
                        shown.toString());
                assertTrue(shown.contains("key digest: k-digest"), shown.toString());
                assertEquals("{\"id\":\"secret-1\"}", run(0, properties, "show", "dl-failed", "--body").get(1));
                run(1, properties, "show", "no-such-id");
                run(2, properties, "replay");
                run(2, properties, "list", "--dry-run");

                List<String> dry = run(0, properties, "replay", "--all", "--outcome", "FAILED", "--dry-run");
                assertEquals("dry run: replay would replay 1 dead letter(s)", dry.get(1));
                assertEquals(2, TestRabbit.total(dlq), "a dry run changes nothing");

                // The application's connector, played here: it takes the copy and sends its decision back.
                CompletableFuture<List<String>> replaying = CompletableFuture.supplyAsync(() -> {
                    try {
                        return run(0, properties, "replay", "dl-failed", "--wait", "60s");
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                await("the replay's copy", Duration.ofSeconds(60), () -> TestRabbit.total(queue), n -> n == 1);
                GetResponse copy = rabbit.drain(queue).get(0);
                assertEquals("dl-failed", copy.getProps().getHeaders().get(RabbitHeaders.REPLAY_OF).toString());
                assertEquals("{\"id\":\"secret-1\"}", new String(copy.getBody(), StandardCharsets.UTF_8));
                assertEquals(List.of("", queue), List.of(copy.getEnvelope().getExchange(), copy.getEnvelope().getRoutingKey()),
                        "to the channel's own queue only");
                assertTrue(CopySignature.of(settings).verify(copy.getProps().getHeaders().get(RabbitHeaders.SIGNATURE).toString(), queue, 0,
                        "", queue, copy.getBody()), "a signed copy, keyed as first published: " + copy.getProps().getHeaders());
                ReplayHeaders replays = new ReplayHeaders(CopySignature.of(settings));
                ReplayHeaders.Stamp stamp = replays.stampOf(copy.getProps().getHeaders(), copy.getBody(), queue).orElseThrow();
                assertEquals(Instant.ofEpochMilli(1_796_000_000_000L), stamp.letterAt(), "the letter's time, signed");
                rabbit.publish("", stamp.replyTo(), new AMQP.BasicProperties.Builder().headers(replays.decision(stamp,
                        ReplayResult.Status.ALREADY_PROCESSED, "the key was processed already")).build(), "");
                List<String> replayed = replaying.get(60, TimeUnit.SECONDS);
                assertEquals("dl-failed ALREADY_PROCESSED: the key was processed already", replayed.get(1), replayed.toString());
                assertEquals(1, TestRabbit.total(dlq), "removed once decided");

                // A letter planted without the connector's signature is shown, and replayed only when asked for.
                rabbit.publish("", dlq, new AMQP.BasicProperties.Builder().headers(Map.of(RabbitHeaders.DEAD_LETTER_ID, "dl-planted",
                        RabbitHeaders.DEAD_LETTERED_AT, 0L, RabbitHeaders.OUTCOME, "FAILED")).build(), "planted");
                assertTrue(run(0, properties, "list").stream().anyMatch(l -> l.startsWith("dl-planted (unverified)  FAILED")));
                assertEquals("dry run: replay would replay 0 dead letter(s)",
                        run(0, properties, "replay", "--all", "--outcome", "FAILED", "--dry-run").get(1));
                assertTrue(run(0, properties, "replay", "dl-planted").get(1).startsWith("dl-planted NOT_REPLAYABLE: unverified"));
                run(2, properties, "replay", "--all", "--unverified");
                assertTrue(run(0, properties, "replay", "dl-planted", "--unverified", "--wait", "1s").get(1)
                        .startsWith("dl-planted PUBLISHED: "));
                GetResponse planted = rabbit.drain(queue).get(0);
                assertFalse(planted.getProps().getHeaders().containsKey(RabbitHeaders.SIGNATURE), "a new message, not a signed copy");
                assertEquals(2, TestRabbit.total(dlq), "not decided in time, the letter stays");

                List<String> discarded = run(0, properties, "discard", "--all");
                assertTrue(discarded.get(1).startsWith("discarded dl-rejected  REJECTED"), discarded.toString());
                assertTrue(discarded.get(2).startsWith("discarded dl-planted (unverified)"), discarded.toString());
                assertEquals(0, TestRabbit.total(dlq));
            } finally {
                rabbit.deleteChannelTopology(queue);
            }
        }
    }

    /** A dead letter as the connector writes it, signed with the channel's key. */
    private static AMQP.BasicProperties letter(HeaderSignature signature, String id, String outcome, String reason, String queue,
                                               String body) {
        Map<String, Object> headers = new HashMap<>(Map.of(RabbitHeaders.DEAD_LETTER_ID, id, RabbitHeaders.OUTCOME, outcome,
                RabbitHeaders.REASON, reason, RabbitHeaders.ATTEMPTS, 3, RabbitHeaders.CONSUMER, "inventory",
                RabbitHeaders.DEAD_LETTERED_AT, 1_796_000_000_000L, RabbitHeaders.KEY_DIGEST, "k-digest",
                RabbitHeaders.ORIGINAL_EXCHANGE, "", RabbitHeaders.ORIGINAL_ROUTING_KEY, queue, RabbitHeaders.QUEUE, queue));
        headers.put(RabbitHeaders.CHANNEL, "orders");
        headers.put(RabbitHeaders.DEAD_LETTER_SIGNATURE, signature.sign(headers, body.getBytes(StandardCharsets.UTF_8)));
        return new AMQP.BasicProperties.Builder().headers(headers).build();
    }

    private static List<String> run(int exit, Path properties, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("--config", properties.toString(), "--channel", "orders"));
        args.addAll(List.of(options));
        return Script.run(SCRIPT, exit, args);
    }
}
