package dev.onceonly.cdi;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.engine.ConsumerSettings;
import dev.onceonly.support.Durations;
import dev.onceonly.engine.GuardEngine;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.support.LogId;
import dev.onceonly.memory.InMemoryClaimStore;
import dev.onceonly.redis.RedisClaimStore;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.HealthProbe;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The running guard of this application: the claim store, the engine and the resolved settings.
 * Created when the application starts (so a store problem shows in the startup log) and closed
 * when it stops.
 */
@ApplicationScoped
public class OnceOnlyRuntime {

    @Inject
    OnceOnlyExtension extension;

    @Inject
    Event<GuardEvent> events;

    @Inject
    Instance<Ledger> ledgers;

    @Inject
    Instance<TransactionRunner> transactionRunners;

    /** Further listeners contributed as beans (metrics). */
    @Inject
    Instance<GuardListener> listeners;

    /** Liberty's managed scheduler: lease renewals then run with the application's context. */
    @Resource(lookup = "java:comp/DefaultManagedScheduledExecutorService")
    ScheduledExecutorService managedScheduler;

    private ScheduledExecutorService ownScheduler;
    private ScheduledFuture<?> ledgerPurge;
    private ClaimStore store;
    private Ledger ledger;
    private GuardEngine engine;
    private boolean enabled;

    @PostConstruct
    void start() {
        OnceOnlyConfig.Global global = extension.global();
        enabled = global.enabled();
        ScheduledExecutorService scheduler = managedScheduler;
        if (scheduler == null) {
            // Outside a Jakarta EE server (plain CDI containers, tests) there is no managed scheduler.
            ownScheduler = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "onceonly-lease-watchdog");
                t.setDaemon(true);
                return t;
            });
            scheduler = ownScheduler;
        }
        TransactionRunner tx = transactionRunners.isResolvable() ? transactionRunners.get() : TransactionRunner.NONE;
        List<String> ledgerConsumers = extension.methods().values().stream()
                .map(GuardedMethod::settings).filter(ConsumerSettings::ledger).map(ConsumerSettings::consumer).sorted().toList();
        // Before the claim store: a ledger that cannot work stops the start with nothing to close.
        ledger = ledgerConsumers.isEmpty() ? null : startLedger(ledgerConsumers, tx, scheduler);
        store = global.store().equals("memory")
                ? InMemoryClaimStore.forDevelopment(global.memoryMaxEntries(), Clock.systemUTC())
                : RedisClaimStore.connect(global.redis());
        List<GuardListener> all = new ArrayList<>();
        all.add(events::fire);
        listeners.forEach(l -> {
            if (l != GuardListener.NONE) {
                all.add(l);
            }
        });
        engine = new GuardEngine(store, tx, ledger, scheduler, GuardListener.all(all), extension.keyDeriver());
        extension.methods().values().forEach(m -> {
            var s = m.settings();
            LogId.ONCE0004I.log(s.consumer(), s.describeKey(), Durations.format(s.lease()), Durations.format(s.retention()),
                    s.storeFailure(), s.ledger());
        });
        LogId.ONCE0001I.log(store.name(), extension.consumerNames());
        if (!enabled) {
            LogId.ONCE0005W.log();
        }
    }

    /** Creates the runtime as the application starts rather than on the first message. */
    void onStartup(@Observes Startup startup) {
        enabled(); // touching the client proxy instantiates the bean
    }

    /**
     * Checks that the ledger can work (a JTA transaction manager, the persistence unit, its table)
     * and schedules its purge. Fails the application start, naming the property that switched the
     * ledger on, when it cannot.
     */
    private Ledger startLedger(List<String> consumers, TransactionRunner tx, ScheduledExecutorService scheduler) {
        String property = new OnceOnlyConfig(ConfigProvider.getConfig(getClass().getClassLoader()))
                .propertyOf(consumers.get(0), "ledger");
        if (tx == TransactionRunner.NONE || !ledgers.isResolvable()) {
            throw new InvalidConfigurationException(property, "true",
                    "false, or a server with JTA transactions and JPA (the ledger writes in the business transaction)");
        }
        Ledger ledger = ledgers.get();
        try {
            ledger.checkReady();
        } catch (RuntimeException e) {
            InvalidConfigurationException problem = new InvalidConfigurationException(property, "true",
                    "false, or a persistence unit '" + LedgerBeans.PERSISTENCE_UNIT + "' whose datasource answers and has the "
                            + "table onceonly_processed_message (DDL in META-INF/onceonly/ddl/); the check failed with " + e);
            problem.initCause(e);
            throw problem;
        }
        OnceOnlyConfig.LedgerSettings settings = extension.ledgerSettings();
        long interval = settings.purgeInterval().toMillis();
        ledgerPurge = scheduler.scheduleWithFixedDelay(() -> purge(ledger, settings), interval, interval, TimeUnit.MILLISECONDS);
        LogId.ONCE0401I.log(consumers, Durations.format(settings.retention()), Durations.format(settings.purgeInterval()),
                settings.purgeBatchSize());
        return ledger;
    }

    private static void purge(Ledger ledger, OnceOnlyConfig.LedgerSettings settings) {
        Instant olderThan = Instant.now().minus(settings.retention());
        try {
            long deleted = ledger.purge(olderThan, settings.purgeBatchSize());
            if (deleted > 0) {
                LogId.ONCE0403I.log(deleted, olderThan);
            }
        } catch (RuntimeException e) {
            // Thrown out of a periodic task, it would cancel every later run.
            LogId.ONCE0404W.log(e, Durations.format(settings.purgeInterval()));
        }
    }

    @PreDestroy
    void stop() {
        if (ledgerPurge != null) {
            ledgerPurge.cancel(false);
        }
        store.close();
        if (ownScheduler != null) {
            ownScheduler.shutdownNow();
        }
    }

    GuardEngine engine() {
        return engine;
    }

    boolean enabled() {
        return enabled;
    }

    /** The claim store in use (health checks, diagnostics). */
    public ClaimStore store() {
        return store;
    }

    /** Readiness of the ledger (when a consumer uses it): its datasource answers and its table is there. */
    @Produces
    HealthProbe ledgerProbe() {
        return HealthProbe.of("ledger", () -> {
            if (ledger == null) {
                return Optional.empty();
            }
            try {
                ledger.checkReady();
                return Optional.empty();
            } catch (RuntimeException e) {
                return Optional.of("datasource or table not usable (" + e.getClass().getSimpleName() + ")");
            }
        });
    }

    /** Readiness of the claim store: Redis must answer a PING; the in-memory store always can. */
    @Produces
    HealthProbe storeProbe() {
        return HealthProbe.of("claim-store:" + store.name(), () -> store instanceof RedisClaimStore redis && !redis.ping()
                ? Optional.of("Redis does not answer PING") : Optional.empty());
    }
}
