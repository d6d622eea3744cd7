package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.deadletter.DeadLetterOperations;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.TestRabbit;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * What the tests of the dead-letter operations share: an incoming channel on the machine's
 * RabbitMQ that dead-letters what a test settles as refused or failed (one attempt), its
 * dead-letter queue's endpoint on a connection of its own, and the operations over it.
 */
abstract class DeadLetterFixture {

    static final Duration LIMIT = InboundChannelTest.LIMIT;

    final String queue = "onceonly.dlq-test." + UUID.randomUUID();
    final String dlq = queue + ".dlq";
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final InboundChannelTest.Probe probe = new InboundChannelTest.Probe();
    final Handover handover = new Handover();
    final AtomicReference<Channel> lastOpened = new AtomicReference<>();
    Connection operationsConnection;
    TestRabbit rabbit;
    InboundChannel channel;
    DeadLetterEndpoint endpoint;
    DeadLetterQueue operations;
    IncomingSettings settings;

    @BeforeEach
    void start() throws Exception {
        rabbit = new TestRabbit();
        settings = TestChannelConfig.of(Map.of("channel-name", "orders", "queue.name", queue, "host", "127.0.0.1",
                "max-attempts", "1", "retry-delay", "100ms", "drain-timeout", "2s"), ChannelConfig.Direction.INCOMING).incoming();
        channel = new InboundChannel(settings, resources, handover, () -> MessageTracing.NONE, () -> DeadLetterListener.NONE);
        channel.subscribe(probe);
        channel.start();
        await("the consumer", LIMIT, () -> {
            try {
                return rabbit.consumers(queue);
            } catch (IOException notDeclaredYet) {
                return -1;
            }
        }, n -> n == 1);
        probe.request(100);
        operationsConnection = resources.open(settings.connection(), "orders", "dead-letters");
        endpoint = DeadLetterEndpoint.of(settings, () -> {
            Channel ch = operationsConnection.createChannel();
            lastOpened.set(ch);
            return ch;
        });
        operations = new DeadLetterOperations(endpoint, Clock.systemUTC());
    }

    @AfterEach
    void stop() throws Exception {
        Connections.closeQuietly(operationsConnection);
        channel.stopConsuming();
        channel.drainAndClose();
        rabbit.deleteChannelTopology(queue);
        rabbit.close();
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    /** Publishes {@code body} to the queue and settles its delivery as the guard decided {@code outcome}. */
    void deadLetter(String body, Outcome outcome, String keyDigest) throws Exception {
        rabbit.publish("", queue, body);
        Message<?> m = probe.next();
        settle(m, outcome, keyDigest);
    }

    /** Dead-letters {@code body} as a failure of key {@code keyDigest}, in an empty queue, and reads it back. */
    DeadLetter theOnlyDeadLetter(String body, String keyDigest) throws Exception {
        deadLetter(body, Outcome.FAILED, keyDigest);
        await("the dead letter", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
        return all().get(0);
    }

    void settle(Message<?> m, Outcome outcome, String keyDigest) {
        Dispatch dispatch = handover.take(m.getPayload());
        assertNotNull(dispatch, "the delivery was posted under its payload");
        String reason = outcome == Outcome.CONFLICT ? "processed before with another body" : "no key";
        dispatch.decided(new GuardEvent("inventory", outcome, Layer.NONE, keyDigest, outcome == Outcome.FAILED ? "" : reason, 0));
        if (outcome == Outcome.FAILED) {
            m.nack(new IllegalStateException("stock service down"));
        } else if (outcome.isRefusal()) {
            m.nack(new MessageRefusedException(outcome, "inventory", keyDigest, reason, null));
        } else {
            m.ack();
        }
    }

    List<DeadLetter> all() {
        return operations.list(DeadLetterFilter.ALL, 0, 100).letters();
    }
}
