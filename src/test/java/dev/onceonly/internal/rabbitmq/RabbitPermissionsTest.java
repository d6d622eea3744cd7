package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.TestRabbit;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The connector under a RabbitMQ user limited to its own names, as docs/connector.md states the rule: it
 * declares its queue, exchange, dead-letter exchange and queue, consumes, publishes its counted
 * retry copies (through the default exchange, "amq.default") and its dead letters — and needs
 * nothing else.
 */
class RabbitPermissionsTest {

    static final Duration LIMIT = Duration.ofSeconds(20);

    final String id = UUID.randomUUID().toString().substring(0, 8);
    final String names = "onceonly.perm." + id;
    final String user = "onceonly-perm-" + id;
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final InboundChannelTest.Probe probe = new InboundChannelTest.Probe();
    InboundChannel channel;

    @BeforeEach
    void limitedUser() throws Exception {
        TestRabbit.rabbitmqctl("add_user", user, "pw-" + id);
        // The rule of docs/connector.md's "Permissions": the application's own names, plus the default
        // exchange for retry copies.
        String own = "^" + names.replace(".", "\\.") + "(\\..*)?$";
        String ownAndDefault = "^(" + names.replace(".", "\\.") + "(\\..*)?|amq\\.default)$";
        TestRabbit.rabbitmqctl("set_permissions", "-p", "/", user, own, ownAndDefault, own);
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (channel != null) {
            channel.stopConsuming();
            channel.drainAndClose();
        }
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.deleteChannelTopology(names);
            rabbit.deleteExchange(names + ".x");
        }
        TestRabbit.rabbitmqctl("delete_user", user);
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    @Test
    void theConnectorWorksWithItsOwnNamesOnly() throws Exception {
        Map<String, String> props = Map.of("channel-name", "perm", "queue.name", names, "exchange.name", names + ".x",
                "routing-keys", "order", "host", "127.0.0.1", "username", user, "password", "pw-" + id,
                "retry-delay", "100ms", "max-attempts", "2");
        channel = new InboundChannel(TestChannelConfig.of(props, ChannelConfig.Direction.INCOMING)
                .incoming(), resources, new Handover(), () -> MessageTracing.NONE, () -> DeadLetterListener.NONE);
        channel.subscribe(probe);
        channel.start();
        await("consuming under the limited user", LIMIT, () -> channel.connected(), up -> up);
        probe.request(10);
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.publish(names + ".x", "order", "fails twice");
            Message<?> first = probe.next();
            first.nack(new IllegalStateException("boom")); // a counted copy through the default exchange
            Message<?> second = probe.next();
            assertEquals(2, second.getMetadata(IncomingRabbitMetadata.class).orElseThrow().attempt());
            second.nack(new IllegalStateException("boom")); // max-attempts: a dead letter
            await("the dead letter", LIMIT, () -> TestRabbit.total(names + ".dlq"), n -> n == 1);
        }
    }
}
