package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Connection;
import dev.onceonly.internal.outbox.OutboxPublisher;
import io.smallrye.config.SmallRyeConfigBuilder;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiFunction;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The outbox relay's real publisher ({@link OutboxEndpoint} and its {@link ConfirmingPublisher}) on
 * the simulation's broker, threads and clock, for {@code dev.onceonly.simulation}: only construction
 * crosses the package line, with the connector-wide settings at their defaults.
 */
public final class SimOutboxEndpoint {

    private SimOutboxEndpoint() {
    }

    /**
     * Builds the endpoint and starts connecting, through {@code connect(channel, role)}.
     *
     * @param confirmTimeout how long a publish waits for its confirm ({@code onceonly.outbox.confirm-timeout})
     */
    public static OutboxPublisher start(ScheduledExecutorService executor, BiFunction<String, String, Connection> connect,
                                        LongSupplier nanoClock, DoubleSupplier jitter, Duration confirmTimeout) {
        RabbitResources resources = new RabbitResources(Executors.defaultThreadFactory(), executor, executor,
                (s, name, role, r, recovered) -> connect.apply(name, role), nanoClock, jitter, Clock.systemUTC());
        ConnectionSettings settings = BrokerConfig.connectorWide(new SmallRyeConfigBuilder().build(),
                BrokerConfig.CredentialsProviders.NONE);
        OutboxEndpoint endpoint = new OutboxEndpoint(settings, confirmTimeout, resources);
        endpoint.start();
        return endpoint;
    }
}
