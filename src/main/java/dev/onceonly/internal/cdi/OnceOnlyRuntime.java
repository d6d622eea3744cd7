package dev.onceonly.internal.cdi;

import dev.onceonly.api.ClaimStoreControl;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.DeadLetterQueues;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.GuardEngine;
import dev.onceonly.internal.ledger.LedgerPurge;
import dev.onceonly.internal.jms.JmsRefusals;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.HealthProbe;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;

/**
 * The composition root of the guard in this application: wires the claim store, the ledger (when a
 * consumer uses it), the listeners and the engine from the settings the extension validated at
 * deployment. Created when the application starts (so a store problem shows in the startup log)
 * and closed when it stops.
 */
@ApplicationScoped
public class OnceOnlyRuntime implements GuardLife {

    @Inject
    OnceOnlyExtension extension;

    @Inject
    Event<GuardEvent> events;

    @Inject
    Instance<Ledger> ledgers;

    /** Absent in a container without JTA and JPA (Weld tests), where neither the ledger nor the outbox runs. */
    @Inject
    Instance<LedgerBeans> ledgerBeans;

    @Inject
    Instance<TransactionRunner> transactionRunners;

    /** The connector's dead-letter queues, whose dead letters keep the ledger rows they may need. */
    @Inject
    Instance<DeadLetterQueues> deadLetterQueues;

    /** Further listeners contributed as beans (metrics, tracing). */
    @Inject
    Instance<GuardListener> listeners;

    /** Liberty's managed scheduler: the ledger's purge and the claim store's tasks run with the application's context. */
    @Resource(lookup = "java:comp/DefaultManagedScheduledExecutorService")
    ScheduledExecutorService managedScheduler;

    /** The engine's tasks (done-mark drains, lease renewals) run on these: context set once per thread, not per task. */
    @Resource(lookup = "java:comp/DefaultManagedThreadFactory")
    ThreadFactory managedThreads;

    private final Clock clock = Clock.systemUTC();
    /** The engine's pool; outside a Jakarta EE server (plain CDI containers, tests) everything's. */
    private ScheduledThreadPoolExecutor ownScheduler;
    private LedgerPurge ledgerPurge;
    private ClaimStore store;
    private Ledger ledger;
    private GuardEngine engine;
    private ResultKeepers results;
    /** Refusal handling of guarded JMS listeners; {@code null} until one is found. Guarded by {@code this}. */
    private JmsRefusals jmsRefusals;
    private boolean enabled;

    @PostConstruct
    void start() {
        OnceOnlyConfig.Global global = extension.global();
        enabled = global.enabled();
        ownScheduler = new ScheduledThreadPoolExecutor(2, managedThreads != null ? managedThreads : r -> {
            Thread t = new Thread(r, "onceonly-engine");
            t.setDaemon(true);
            return t;
        });
        ownScheduler.setRemoveOnCancelPolicy(true); // lease renewals are cancelled by the thousand
        ScheduledExecutorService scheduler = managedScheduler != null ? managedScheduler : ownScheduler;
        TransactionRunner tx = transactionRunners.isResolvable() ? transactionRunners.get() : TransactionRunner.NONE;
        List<String> ledgerConsumers = extension.methods().values().stream()
                .map(GuardedMethod::settings).filter(ConsumerSettings::ledger).map(ConsumerSettings::consumer).sorted().toList();
        // Before the claim store: a ledger that cannot work stops the start with nothing to close.
        if (!ledgerConsumers.isEmpty()) {
            ledger = checkedLedger(ledgerConsumers, tx);
            OnceOnlyConfig.LedgerSettings s = extension.ledgerSettings();
            ledgerPurge = new LedgerPurge(ledger, s.retention(), s.purgeInterval(), s.purgeBatchSize(), clock, scheduler,
                    () -> deadLetterQueues.isResolvable() ? deadLetterQueues.get().oldest() : Optional.empty());
            LogId.ONCE0401I.log(ledgerConsumers, Durations.format(s.retention()), Durations.format(s.purgeInterval()),
                    s.purgeBatchSize());
        }
        List<String> jmsConsumers = extension.methods().values().stream()
                .filter(GuardedMethod::jms).map(m -> m.settings().consumer()).sorted().toList();
        if (!jmsConsumers.isEmpty()) {
            jmsRefusals = JmsListeners.refusals(extension.jmsSettings(), jmsConsumers);
        }
        store = ClaimStores.open(global, extension.redisSettings(), extension.databaseStoreSettings(), extension.ledgerSettings(),
                clock, scheduler);
        List<GuardListener> all = new ArrayList<>();
        all.add(events::fire);
        listeners.forEach(l -> {
            if (l != GuardListener.NONE) {
                all.add(l);
            }
        });
        try {
            results = ResultKeepers.open(extension.methods().values(), global, store, () -> ledgerBeans.get().results(),
                    extension::resultProperty, extension.keyDeriver(), clock);
        } catch (RuntimeException e) {
            store.close(); // the start fails: nothing else will close it
            throw e;
        }
        engine = new GuardEngine(store, results.transactions(tx), ledger, ownScheduler, GuardListener.all(all), extension.keyDeriver());
        extension.methods().values().forEach(m -> {
            var s = m.settings();
            LogId.ONCE0004I.log(s.consumer(), s.describeKey(), Durations.format(s.lease()), Durations.format(s.retention()),
                    s.storeFailure(), s.ledger(), s.retryRule().describe());
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
     * The ledger, checked: a JTA transaction manager, its datasource, its table. Fails the
     * application start, naming the property that switched the ledger on, when it cannot work.
     */
    private Ledger checkedLedger(List<String> consumers, TransactionRunner tx) {
        String property = extension.ledgerProperty(consumers.get(0));
        if (tx == TransactionRunner.NONE || !ledgers.isResolvable()) {
            throw new InvalidConfigurationException(property, "true",
                    "false, or a server with JTA transactions and JPA (the ledger writes in the business transaction)");
        }
        try {
            Ledger checked = ledgers.get();
            checked.checkReady();
            return checked;
        } catch (InvalidConfigurationException e) {
            throw e;
        } catch (RuntimeException e) {
            OnceOnlyConfig.LedgerSettings s = extension.ledgerSettings();
            InvalidConfigurationException problem = new InvalidConfigurationException(property, "true",
                    "false, or onceonly.ledger.datasource (" + s.dataSource() + ") naming a JTA datasource that answers and has "
                            + "the table " + s.table() + " (onceonly.ledger.table; DDL in META-INF/onceonly/ddl/); the check"
                            + " failed with " + e);
            problem.initCause(e);
            throw problem;
        }
    }

    @PreDestroy
    void stop() {
        if (ledgerPurge != null) {
            ledgerPurge.close();
        }
        // The store outlives every handler: running ones still renew their leases and mark their keys done.
        Duration wait = extension.global().shutdownTimeout();
        int unfinished = engine.close(wait);
        if (unfinished > 0) {
            LogId.ONCE0008W.log(unfinished, Durations.format(wait));
        }
        // The ledger and the outbox share the sessions; the outbox relay stopped before the application scope ended.
        if (ledgerBeans.isResolvable()) {
            ledgerBeans.get().closeSessions();
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

    /** {@return the results the guarded methods keep} */
    ResultKeepers results() {
        return results;
    }

    /**
     * {@return the refusal handling of guarded JMS listeners} Wired at startup for the listeners
     * found then; on first use for one the container showed only at its first call.
     */
    synchronized JmsRefusals jmsRefusals(GuardedMethod listener) {
        if (jmsRefusals == null) {
            jmsRefusals = JmsListeners.refusals(extension.jmsSettings(), List.of(listener.settings().consumer()));
        }
        return jmsRefusals;
    }

    /** {@return the claim store in use (diagnostics)} */
    public ClaimStore store() {
        return store;
    }

    @Override
    public Optional<String> storeName() {
        return Optional.ofNullable(store).map(ClaimStore::name);
    }

    /** The switch that suspends and resumes the claim store for this application. */
    @Produces
    ClaimStoreControl claimStoreControl() {
        return engine;
    }

    /**
     * Readiness of the ledger: its datasource answers and its table is there. {@code null} (a
     * dependent producer may give none) when no consumer uses the ledger: a part not in use is not
     * reported.
     */
    @Produces
    @Dependent
    HealthProbe ledgerProbe() {
        Ledger checked = ledger;
        if (checked == null) {
            return null;
        }
        return HealthProbe.of("ledger", () -> {
            try {
                checked.checkReady();
                return Optional.empty();
            } catch (RuntimeException e) {
                return Optional.of("datasource or table not usable (" + e.getClass().getSimpleName() + ")");
            }
        });
    }

    /** Readiness of the claim store, as the store itself answers it. */
    @Produces
    HealthProbe storeProbe() {
        return new HealthProbe() {
            @Override
            public String name() {
                return "claim-store:" + store.name();
            }

            @Override
            public Optional<String> problem() {
                return store.problem();
            }

            /**
             * Which Redis deployment the store uses (addresses only, never credentials), also when UP;
             * and whether the application suspended the store (still ready: the store-failure policy
             * guards new messages).
             */
            @Override
            public Map<String, String> details() {
                Map<String, String> details = new LinkedHashMap<>();
                if (store instanceof RedisClaimStore redis) {
                    details.put("claim-store:redis:topology", redis.topology());
                }
                if (engine.suspended()) {
                    details.put("claim-store:suspended", "new messages follow each consumer's store-failure policy");
                }
                return details;
            }
        };
    }
}
