package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.onceonly.testing.Script;
import dev.onceonly.testing.TestRabbit;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/onceonly-topology} against the machine's RabbitMQ: a channel's topology declared by the
 * connector's own code ({@link Topology#declare}, {@link DelayQueues}) is listed from the
 * application's properties file, and deleted on request: a dry run first, then only what is safe,
 * then the rest when forced.
 */
class TopologyCommandTest {

    private static final Path SCRIPT = Path.of("bin", "onceonly-topology");

    @Test
    void listsWhatTheConnectorDeclaredAndDeletesItOnRequest() throws Exception {
        String queue = "onceonly.topology-test." + UUID.randomUUID();
        String exchange = queue + ".orders";
        Map<String, String> channel = Map.of("channel-name", "orders", "queue.name", queue, "exchange.name", exchange,
                "routing-keys", "order.placed", "retry-broker-delay-above", "2s", "retry-max-delay", "10s");
        Path properties = Files.createTempFile("onceonly-topology", ".properties");
        StringBuilder file = new StringBuilder("mp.messaging.incoming.orders.connector=onceonly-rabbitmq\n");
        // The queue's name through an expression, as applications write it.
        file.append("mp.messaging.incoming.orders.queue.name=${names}\nnames=").append(queue).append('\n');
        channel.forEach((k, v) -> {
            if (!k.equals("channel-name") && !k.equals("queue.name")) {
                file.append("mp.messaging.incoming.orders.").append(k).append('=').append(v).append('\n');
            }
        });
        file.append("mp.messaging.incoming.other.connector=smallrye-kafka\n");
        Files.writeString(properties, file);

        IncomingSettings settings = TestChannelConfig.of(channel, ChannelConfig.Direction.INCOMING).incoming();
        Duration delay = settings.backoff().brokerDelays().get(1);
        String delayQueue = DelayQueueNames.name(queue, delay);
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        try (Connection c = f.newConnection("topology-test"); TestRabbit rabbit = new TestRabbit()) {
            try {
                Topology.declare(c, c.createChannel(), settings).close();
                assertTrue(new DelayQueues(settings, () -> c, System::nanoTime).queueFor(delay).isPresent());
                rabbit.publish("", settings.deadLetterQueue(), "a dead letter");

                List<String> listed = run(properties);
                assertTrue(listed.contains("channel orders (incoming) on amqp://guest@localhost:5672/"), listed.toString());
                assertTrue(listed.contains("  queue    " + queue + " (queue): exists, 0 message(s), 0 consumer(s); --delete deletes it"),
                        listed.toString());
                assertTrue(listed.contains("  queue    " + queue + ".dlq (dead-letter queue): exists, 1 message(s), 0 consumer(s); "
                        + "--delete keeps it (holds messages), --force deletes it"), listed.toString());
                assertTrue(listed.contains("  exchange " + queue + ".dlx (dead-letter exchange): exists; --delete deletes it"),
                        listed.toString());
                assertTrue(listed.contains("  exchange " + exchange + " (exchange the queue is bound to): exists; "
                        + "--delete keeps it (shared), --include-exchanges deletes it"), listed.toString());
                assertTrue(listed.contains("  queue    " + delayQueue + " (delay queue, retries waiting " + delay.toMillis()
                        + " ms): exists, 0 message(s), 0 consumer(s); --delete deletes it"), listed.toString());
                assertEquals(1, listed.stream().filter(l -> l.contains(".onceonly.delay.") && l.contains("exists")).count(),
                        "only the delay queue that exists: " + listed);
                assertTrue(listed.stream().noneMatch(l -> l.contains("other")), "only the connector's channels: " + listed);
                assertTrue(exists(c, queue, true) && exists(c, delayQueue, true), "a dry run deletes nothing");

                List<String> deleted = run(properties, "--delete");
                assertTrue(deleted.contains("  queue    " + queue + " (queue): exists, 0 message(s), 0 consumer(s); deleted"),
                        deleted.toString());
                assertFalse(exists(c, queue, true));
                assertFalse(exists(c, delayQueue, true));
                assertFalse(exists(c, queue + ".dlx", false));
                assertTrue(exists(c, queue + ".dlq", true), "the dead letters are kept");
                assertTrue(exists(c, exchange, false), "the exchange publishers use is kept");

                List<String> forced = run(properties, "--delete", "--force", "--include-exchanges");
                assertTrue(forced.contains("  queue    " + queue + ".dlq (dead-letter queue): exists, 1 message(s), 0 consumer(s); "
                        + "deleted"), forced.toString());
                assertFalse(exists(c, queue + ".dlq", true));
                assertFalse(exists(c, exchange, false));
                assertTrue(run(properties).contains("  queue    " + queue + " (queue): absent"));
            } finally {
                rabbit.deleteQueue(delayQueue);
                rabbit.deleteChannelTopology(queue);
                rabbit.deleteExchange(exchange);
            }
        }
    }

    /**
     * The properties are read as the server's MicroProfile Config reads them (SmallRye Config): an
     * environment variable wins over the file (the broker's host here: the file's does not resolve),
     * the active profile's {@code %name.} properties win over plain ones, and expressions are expanded
     * with their defaults. Before, the command's own reader knew no profiles.
     */
    @Test
    void environmentProfilesAndExpressionsAreReadAsTheServerWould() throws Exception {
        String queue = "onceonly.topology-test." + UUID.randomUUID();
        Path properties = Files.createTempFile("onceonly-topology", ".properties");
        Files.writeString(properties, String.join("\n",
                "mp.messaging.connector.onceonly-rabbitmq.host=no-such-host.invalid",
                "mp.messaging.incoming.orders.connector=onceonly-rabbitmq",
                "mp.messaging.incoming.orders.queue.name=${names}.plain",
                "%ci.mp.messaging.incoming.orders.queue.name=${names}.${stage:ci}",
                "names=from-the-file", ""));
        Map<String, String> env = Map.of("MP_MESSAGING_CONNECTOR_ONCEONLY_RABBITMQ_HOST", "127.0.0.1", "NAMES", queue);

        List<String> plain = run(properties, env);
        assertTrue(plain.contains("channel orders (incoming) on amqp://guest@127.0.0.1:5672/"), plain.toString());
        assertTrue(plain.contains("  queue    " + queue + ".plain (queue): absent"), plain.toString());

        List<String> ci = run(properties, env, "--set", "mp.config.profile=ci");
        assertTrue(ci.contains("  queue    " + queue + ".ci (queue): absent"), ci.toString());
    }

    private static boolean exists(Connection c, String name, boolean queue) throws IOException {
        Channel ch = c.createChannel();
        try {
            if (queue) {
                ch.queueDeclarePassive(name);
            } else {
                ch.exchangeDeclarePassive(name);
            }
            return true;
        } catch (IOException absent) {
            return false;
        } finally {
            Connections.closeQuietly(ch);
        }
    }

    private static List<String> run(Path properties, String... options) throws Exception {
        return run(properties, Map.of(), options);
    }

    private static List<String> run(Path properties, Map<String, String> env, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("--config", properties.toString()));
        args.addAll(List.of(options));
        return Script.run(SCRIPT, 0, env, args);
    }
}
