package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.impl.CredentialsProvider;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.api.DeadLetterQueues;
import dev.onceonly.internal.deadletter.DeadLetterChannels;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.HealthProbe;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.outbox.OutboxPublisher;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Priority;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import jakarta.enterprise.event.Startup;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.literal.NamedLiteral;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.eclipse.microprofile.reactive.messaging.spi.IncomingConnectorFactory;
import org.eclipse.microprofile.reactive.messaging.spi.OutgoingConnectorFactory;
import org.eclipse.microprofile.reactive.streams.operators.PublisherBuilder;
import org.eclipse.microprofile.reactive.streams.operators.ReactiveStreams;
import org.eclipse.microprofile.reactive.streams.operators.SubscriberBuilder;

import java.util.ArrayList;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;

/**
 * The {@value #NAME} connector: RabbitMQ (AMQP 0-9-1, amqp-client) for MicroProfile Reactive
 * Messaging, aware of OnceOnly's outcomes. Select it per channel with
 * {@code mp.messaging.incoming.<channel>.connector=onceonly-rabbitmq} (or {@code outgoing}); the
 * properties are listed in docs/configuration.md.
 *
 * <p>Channels are created during deployment (so a bad property stops the application) but connect
 * only once the application has started, on the server's managed threads. Before the application
 * scope is destroyed, incoming channels stop consuming and drain, then outgoing channels wait for
 * their confirms: the application's beans are still alive while in-flight messages finish.
 */
@ApplicationScoped
@Connector(RabbitConnector.NAME)
public class RabbitConnector implements IncomingConnectorFactory, OutgoingConnectorFactory {

    /** The connector's name, for {@code mp.messaging.[incoming|outgoing].<channel>.connector}. */
    public static final String NAME = ChannelProperties.CONNECTOR;

    @Resource(lookup = "java:comp/DefaultManagedThreadFactory")
    ThreadFactory managedThreads;

    /** Where each delivery is handed to the guard of the method invoked for it. */
    @Inject
    Handover handover;

    /** The application's credentials providers, for {@code credentials-provider-name}. */
    @Inject
    @Any
    Instance<CredentialsProvider> credentialsProviders;

    /** The trace context of messages (observability's, when MicroProfile Telemetry is there): see {@link #tracing()}. */
    @Inject
    Instance<MessageTracing> tracingBeans;

    /** Told of each dead letter (observability's metrics, when MicroProfile Telemetry or Metrics is there). */
    @Inject
    @Any
    Instance<DeadLetterListener> deadLetterBeans;

    private RabbitResources resources;
    private volatile MessageTracing tracing;
    private volatile DeadLetterListener deadLetters;

    private final List<InboundChannel> inbound = new CopyOnWriteArrayList<>();
    private final List<OutboundChannel> outbound = new CopyOnWriteArrayList<>();
    /** The outbox relay's connection, made when the application uses the outbox. */
    private OutboxEndpoint outbox;
    private boolean started;

    /**
     * The connector's threads all come from the server's managed thread factory, so every
     * delivery, confirm and retry runs with the application's context. They live in pools the
     * connector owns rather than in the server's managed executors: those refuse new tasks once
     * the application starts stopping, which is exactly when the connector still needs threads to
     * cancel its consumers, finish in-flight messages and requeue the rest.
     */
    @PostConstruct
    void createThreads() {
        resources = RabbitResources.create(managedThreads);
    }

    private Optional<CredentialsProvider> credentialsProvider(String name) {
        Instance<CredentialsProvider> named = credentialsProviders.select(NamedLiteral.of(name));
        return named.isResolvable() ? Optional.of(named.get()) : Optional.empty();
    }

    @PreDestroy
    void releaseThreads() {
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    @Override
    public PublisherBuilder<? extends Message<?>> getPublisherBuilder(Config config) {
        InboundChannel channel = new InboundChannel(new ChannelConfig(config, ConfigProvider.getConfig(), ChannelConfig.Direction.INCOMING, this::credentialsProvider).incoming(), resources, handover,
                this::tracing, this::deadLetters);
        inbound.add(channel);
        startIfRunning(channel::start);
        return ReactiveStreams.fromPublisher(channel);
    }

    @Override
    public SubscriberBuilder<? extends Message<?>, Void> getSubscriberBuilder(Config config) {
        OutboundChannel channel = new OutboundChannel(new ChannelConfig(config, ConfigProvider.getConfig(), ChannelConfig.Direction.OUTGOING, this::credentialsProvider).outgoing(), resources,
                this::tracing);
        outbound.add(channel);
        startIfRunning(channel::start);
        return ReactiveStreams.fromSubscriber(channel);
    }

    /**
     * Starts every channel once the application has started: Reactive Messaging subscribes during
     * deployment, and a delivery must not reach a method before the application is up.
     */
    void onStartup(@Observes(notifyObserver = Reception.IF_EXISTS) Startup event) {
        OutboxEndpoint o;
        synchronized (this) {
            started = true;
            o = outbox;
        }
        inbound.forEach(InboundChannel::start);
        outbound.forEach(OutboundChannel::start);
        if (o != null) {
            o.start();
        }
    }

    private synchronized OutboxEndpoint outboxEndpoint() {
        return outbox;
    }

    /**
     * The outbox relay's publisher (asked for only when the application injects the outbox): one
     * connection of its own, with the connector-wide settings {@code onceonly.rabbitmq.*}.
     *
     * @param settings the outbox's settings as read and validated once at deployment (its confirm timeout)
     */
    @Produces
    synchronized OutboxPublisher outboxPublisher(OnceOnlyConfig.OutboxSettings settings) {
        if (outbox == null) {
            outbox = new OutboxEndpoint(BrokerConfig.connectorWide(ConfigProvider.getConfig(), this::credentialsProvider),
                    settings.confirmTimeout(), resources);
            if (started) {
                outbox.start();
            }
        }
        return outbox;
    }

    /** Closes the outbox connection once the outbox relay stopped (priority 20). */
    void closeOutbox(@Observes(notifyObserver = Reception.IF_EXISTS) @Priority(30)
                     @BeforeDestroyed(ApplicationScoped.class) Object event) {
        OutboxEndpoint o = outboxEndpoint();
        if (o != null) {
            o.stop();
        }
    }

    /**
     * Stops before any application-scoped bean is destroyed (and before Reactive Messaging tears
     * down its streams), so messages being processed can finish with the application intact.
     */
    void onShutdown(@Observes(notifyObserver = Reception.IF_EXISTS) @Priority(10)
                    @BeforeDestroyed(ApplicationScoped.class) Object event) {
        // Every incoming channel stops consuming first, so their drains overlap instead of adding up.
        inbound.forEach(InboundChannel::stopConsuming);
        inbound.forEach(InboundChannel::drainAndClose);
        outbound.forEach(OutboundChannel::stop);
    }

    /**
     * The dead-letter queues of the incoming channels ({@code @Inject DeadLetterQueues}); each
     * operation reads on an AMQP channel of its own, on the incoming channel's publishing connection.
     */
    @Produces
    @ApplicationScoped
    DeadLetterQueues deadLetterQueues() {
        return new DeadLetterChannels(() -> inbound.stream().map(InboundChannel::deadLetters).toList(),
                Clock.systemUTC());
    }

    /** Readiness: every channel's broker connections are open (amqp-client recovers them after a drop). */
    @Produces
    HealthProbe brokerProbe() {
        return HealthProbe.of("rabbitmq", () -> {
            List<String> down = new ArrayList<>();
            inbound.stream().filter(c -> !c.connected()).forEach(c -> down.add(c.name()));
            outbound.stream().filter(c -> !c.connected()).forEach(c -> down.add(c.name()));
            OutboxEndpoint o = outboxEndpoint();
            if (o != null && !o.connected()) {
                down.add(o.name());
            }
            return down.isEmpty() ? Optional.empty() : Optional.of("not connected: channel(s) " + String.join(", ", down));
        });
    }

    /**
     * The tracing of messages, resolved on the first publish or delivery rather than when channels
     * are created: Reactive Messaging creates them while the deployment is validated, possibly
     * before the settings the tracing depends on ({@code onceonly.tracing.enabled}) are. Two
     * threads may both resolve it at first; either result is the same.
     */
    private MessageTracing tracing() {
        MessageTracing t = tracing;
        if (t == null) {
            t = tracingBeans.isResolvable() ? tracingBeans.get() : MessageTracing.NONE;
            tracing = t;
        }
        return t;
    }

    /** The dead-letter listeners, resolved on the first dead letter, for the reason {@link #tracing()} gives. */
    private DeadLetterListener deadLetters() {
        DeadLetterListener d = deadLetters;
        if (d == null) {
            List<DeadLetterListener> all = new ArrayList<>();
            deadLetterBeans.forEach(l -> {
                if (l != DeadLetterListener.NONE) {
                    all.add(l);
                }
            });
            d = DeadLetterListener.all(all);
            deadLetters = d;
        }
        return d;
    }

    private synchronized void startIfRunning(Runnable start) {
        if (started) {
            start.run();
        }
    }
}
