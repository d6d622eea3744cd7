package dev.onceonly.internal.cdi;

import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.Outbox;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.outbox.OutboxRelay;
import dev.onceonly.internal.outbox.jpa.JpaOutboxStore;
import dev.onceonly.internal.outbox.jpa.JtaOutbox;
import dev.onceonly.spi.HealthProbe;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.outbox.OutboxPublisher;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;
import jakarta.annotation.Priority;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.BeforeDestroyed;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import jakarta.enterprise.event.Startup;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Wires the transactional outbox when the application injects {@link Outbox}: the table on the
 * ledger's datasource, checked at startup, and the relay on the server's managed executors,
 * publishing through the connector's outbox connection. The relay stops before the connector closes
 * that connection and after incoming channels drained (rows committed later wait for the sweep of
 * the next start, or of another instance).
 */
@ApplicationScoped
public class OutboxRuntime {

    @Inject
    OnceOnlyExtension extension;

    @Inject
    LedgerBeans ledgerBeans;

    @Inject
    RequiresNewTransaction newTransaction;

    @Inject
    Instance<OutboxPublisher> publishers;

    @Inject
    Instance<OutboxListener> listeners;

    /** The sender's trace context into each message (observability's, when MicroProfile Telemetry is there). */
    @Inject
    Instance<MessageTracing> tracing;

    /** Runs the fast path with the application's context (its transactions, its class loader). */
    @Resource(lookup = "java:comp/DefaultManagedExecutorService")
    ExecutorService managedExecutor;

    /** Runs the sweeps. */
    @Resource(lookup = "java:comp/DefaultManagedScheduledExecutorService")
    ScheduledExecutorService managedScheduler;

    private final Clock clock = Clock.systemUTC();
    private volatile OutboxStore store;
    private volatile OutboxRelay relay;
    private volatile OutboxPublisher publisher;

    /** Checks the table and starts the relay as the application starts, when the outbox is injected. */
    void onStartup(@Observes Startup startup) {
        start();
    }

    private synchronized void start() {
        if (relay != null || !extension.outboxInjected()) {
            return;
        }
        OnceOnlyConfig.OutboxSettings s = extension.outboxSettings();
        if (!publishers.isResolvable() || managedExecutor == null || managedScheduler == null) {
            throw new OnceOnlyException("The outbox needs the onceonly-rabbitmq connector (MicroProfile Reactive Messaging) and"
                    + " the server's managed executors (Jakarta Concurrency), to publish its rows");
        }
        ledgerBeans.createTable(LedgerSchema.Part.OUTBOX, s.table());
        // Scoped by the key prefix: applications sharing the table relay, purge and count only their own rows.
        JpaOutboxStore table = new JpaOutboxStore(s.table(), ledgerBeans.sessions()::current, newTransaction,
                extension.global().keyPrefix());
        try {
            table.checkReady();
        } catch (RuntimeException e) {
            throw new OnceOnlyException("The outbox table " + s.table() + " (onceonly.outbox.table) is not usable through "
                    + "onceonly.ledger.datasource (" + extension.ledgerSettings().dataSource() + "): create it with "
                    + "META-INF/onceonly/ddl/, or set onceonly.ledger.create-schema=true; the check failed with " + e, e);
        }
        List<OutboxListener> all = new ArrayList<>();
        listeners.forEach(l -> {
            if (l != OutboxListener.NONE) {
                all.add(l);
            }
        });
        OutboxListener listener = new OutboxListener() {
            @Override
            public void relayed(int rows, boolean sweep, Duration[] sinceWrite) {
                all.forEach(l -> l.relayed(rows, sweep, sinceWrite));
            }

            @Override
            public void refused(boolean parked) {
                all.forEach(l -> l.refused(parked));
            }

            @Override
            public void counted(OutboxStore.Counts counts) {
                all.forEach(l -> l.counted(counts));
            }
        };
        publisher = publishers.get();
        store = table;
        // A confirm that comes after the relay stopped waiting leaves its row pending: wait a little longer than the publisher.
        Duration confirmWait = s.confirmTimeout().plusSeconds(2);
        relay = new OutboxRelay(table, publisher, new OutboxRelay.Settings(s.sweepInterval(), s.sweepAfter(), s.batchSize(),
                s.maxAttempts(), s.retention(), confirmWait, s.gather()), clock, managedExecutor, managedScheduler, listener);
        LogId.ONCE0601I.log(extension.ledgerSettings().dataSource(), Durations.format(s.sweepInterval()),
                Durations.format(s.sweepAfter()), s.batchSize(), s.gather().isZero() ? "0" : Durations.format(s.gather()),
                s.maxAttempts(), Durations.format(s.retention()));
    }

    /** The outbox settings read and validated once at deployment, for the connector's outbox connection. */
    @Produces
    OnceOnlyConfig.OutboxSettings outboxSettings() {
        return extension.outboxSettings();
    }

    /**
     * The outbox the application injects. Dependent on the relay: a send before the application
     * started (a {@code @PostConstruct}) starts it.
     */
    @Produces
    @ApplicationScoped
    Outbox outbox() {
        TransactionSynchronizationRegistry registry;
        try {
            registry = (TransactionSynchronizationRegistry) new InitialContext().lookup("java:comp/TransactionSynchronizationRegistry");
        } catch (NamingException e) {
            throw new OnceOnlyException("The outbox needs JTA transactions (java:comp/TransactionSynchronizationRegistry): " + e, e);
        }
        start();
        return new JtaOutbox(store, registry, rows -> relay.committed(rows), clock,
                tracing.isResolvable() ? tracing.get() : MessageTracing.NONE);
    }

    /** Stops the relay after the connector's channels drained and before it closes the outbox connection. */
    void beforeShutdown(@Observes(notifyObserver = Reception.IF_EXISTS) @Priority(20)
                        @BeforeDestroyed(ApplicationScoped.class) Object event) {
        OutboxRelay r = relay;
        if (r != null) {
            r.close();
        }
    }

    /**
     * Readiness of the outbox, when in use: DOWN while its broker connection is down. Pending and
     * parked rows, as the last sweep counted them, show beside it ({@code outbox:pending},
     * {@code outbox:parked}) without changing the status: a parked row needs an operator, not a
     * restart or less traffic. {@code null} (a dependent producer may give none) when the
     * application does not inject the outbox: a part not in use is not reported.
     */
    @Produces
    @Dependent
    HealthProbe outboxProbe() {
        if (!extension.outboxInjected()) {
            return null;
        }
        return new HealthProbe() {
            @Override
            public String name() {
                return "outbox";
            }

            @Override
            public Optional<String> problem() {
                OutboxPublisher p = publisher;
                if (p == null || p.connected()) {
                    return Optional.empty();
                }
                return Optional.of("the relay is not connected to the broker; rows wait in the table");
            }

            @Override
            public Map<String, String> details() {
                OutboxRelay r = relay;
                return r == null ? Map.of() : r.lastCounts().map(c -> Map.of("outbox:pending", Long.toString(c.pending()),
                        "outbox:parked", Long.toString(c.parked()))).orElse(Map.of());
            }
        };
    }
}
