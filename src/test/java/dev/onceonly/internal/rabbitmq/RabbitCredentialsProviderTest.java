package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.impl.CredentialsProvider;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.TestRabbit;
import io.smallrye.config.PropertiesConfigSource;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rotating password through an application's {@code CredentialsProvider}
 * ({@code credentials-provider-name}), on the real broker: the password of the channel's user is
 * changed in RabbitMQ and the connection closed; while the provider still gives the old password
 * every reconnection fails, and as soon as it gives the new one the channel consumes again, without
 * a restart.
 */
class RabbitCredentialsProviderTest {

    static final Duration LIMIT = Duration.ofSeconds(20);

    final String id = UUID.randomUUID().toString().substring(0, 8);
    final String queue = "onceonly.creds." + id;
    final String user = "onceonly-creds-" + id;
    final AtomicReference<String> password = new AtomicReference<>("first-" + id);
    final AtomicInteger asked = new AtomicInteger();
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final InboundChannelTest.Probe probe = new InboundChannelTest.Probe();
    InboundChannel channel;

    /** What an application would produce as {@code @Produces @Named("rotating") CredentialsProvider}. */
    final CredentialsProvider rotating = new CredentialsProvider() {
        @Override
        public String getUsername() {
            return user;
        }

        @Override
        public String getPassword() {
            asked.incrementAndGet();
            return password.get();
        }
    };

    @BeforeEach
    void user() throws Exception {
        TestRabbit.rabbitmqctl("add_user", user, password.get());
        TestRabbit.rabbitmqctl("set_permissions", "-p", "/", user, ".*", ".*", ".*");
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (channel != null) {
            channel.stopConsuming();
            channel.drainAndClose();
        }
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.deleteChannelTopology(queue);
            rabbit.deleteExchange(queue + ".x");
        }
        TestRabbit.rabbitmqctl("delete_user", user);
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    @Test
    void aRotatedPasswordIsTakenFromTheProviderAtTheNextReconnection() throws Exception {
        Map<String, String> props = Map.of("channel-name", "creds-" + id, "queue.name", queue, "exchange.name", queue + ".x",
                "routing-keys", "order", "host", "127.0.0.1", "credentials-provider-name", "rotating",
                "copy-signing-key", "copy-signing-key-of-the-test-" + id, "network-recovery-interval", "200ms");
        channel = new InboundChannel(TestChannelConfig.of(props, new PropertiesConfigSource(Map.of(), "global", 100),
                ChannelConfig.Direction.INCOMING, name -> name.equals("rotating") ? Optional.of(rotating) : Optional.empty())
                .incoming(), resources, new Handover(), () -> MessageTracing.NONE, () -> DeadLetterListener.NONE);
        channel.subscribe(probe);
        channel.start();
        await("consuming as the provider's user", LIMIT, () -> channel.connected(), up -> up);
        probe.request(10);
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.publish(queue + ".x", "order", "before the rotation");
            Message<?> first = probe.next();
            assertEquals("before the rotation", first.getPayload());
            first.ack().toCompletableFuture().join();

            // The password changes in RabbitMQ; the connection goes (as it would when a node restarts).
            TestRabbit.rabbitmqctl("change_password", user, "second-" + id);
            TestRabbit.closeConnection("onceonly:creds-" + id + ":consume");
            await("the channel to notice", LIMIT, () -> channel.connected(), up -> !up);
            int before = asked.get();
            await("reconnection attempts with the old password", LIMIT, asked::get, n -> n >= before + 3);
            assertFalse(channel.connected(), "the old password is refused");

            password.set("second-" + id);
            await("consuming again with the new password", LIMIT, () -> channel.connected(), up -> up);
            rabbit.publish(queue + ".x", "order", "after the rotation");
            Message<?> second = probe.next();
            assertEquals("after the rotation", second.getPayload());
            second.ack().toCompletableFuture().join();
            assertTrue(TestRabbit.connectionNames().stream().anyMatch(n -> n.startsWith("onceonly:creds-" + id + ":consume@")));
        }
    }
}
