package dev.onceonly.internal.rabbitmq;

import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.outbox.OutboxPublisher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.Executors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The connector's outbox connection takes the outbox settings read once at deployment (which the
 * CDI wiring hands its producer), not a second reading of the configuration.
 */
class RabbitConnectorOutboxTest {

    private final RabbitConnector connector = new RabbitConnector();

    @AfterEach
    void releaseThreads() {
        connector.releaseThreads();
    }

    @Test
    void theOutboxPublisherUsesTheConfirmTimeoutItIsGiven() throws Exception {
        connector.managedThreads = Executors.defaultThreadFactory();
        connector.createThreads();
        Duration given = Duration.ofMillis(1234); // not the catalogue's default (10s) that a fresh read would find
        OnceOnlyConfig.OutboxSettings settings = new OnceOnlyConfig.OutboxSettings(Duration.ofSeconds(30), Duration.ofMinutes(1),
                100, 5, Duration.ofDays(7), given, "onceonly_outbox",
                Duration.ofMillis(5));

        OutboxPublisher publisher = connector.outboxPublisher(settings);

        Field confirmTimeout = OutboxEndpoint.class.getDeclaredField("confirmTimeout");
        confirmTimeout.setAccessible(true);
        assertEquals(given, confirmTimeout.get(publisher));
        assertSame(publisher, connector.outboxPublisher(settings), "one outbox connection per connector");
    }
}
