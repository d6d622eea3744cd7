package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.time.Duration;

import static dev.onceonly.internal.config.OnceOnlyProperties.*;

/**
 * Reads and validates OnceOnly's own MicroProfile Config properties ({@code onceonly.*}), once, at
 * startup, through the shared {@link ConfigReader}. Every error is an
 * {@link InvalidConfigurationException} naming the property and what it accepts.
 *
 * <p>The properties are listed in {@code OnceOnlyProperties}; per-consumer settings are read by
 * {@code ConsumerConfig}, Redis's by the redis part, the connector's by the rabbitmq part.
 */
public final class OnceOnlyConfig {

    /** The prefix of every OnceOnly property. */
    public static final String PREFIX = "onceonly.";

    /**
     * Global settings (not per consumer).
     *
     * @param metrics whether MicroProfile Telemetry gets the guard's metrics ({@code onceonly.metrics.enabled})
     * @param tracing whether it gets spans of the guard's phases ({@code onceonly.tracing.enabled})
     * @param shutdownTimeout how long stopping waits for guarded messages still running before the
     *                claim store closes ({@code onceonly.shutdown-timeout})
     */
    public record Global(boolean enabled, String store, String keyPrefix, long memoryMaxEntries,
                         boolean metrics, boolean tracing, Duration shutdownTimeout) {
    }

    /**
     * Settings of the ledger (shared by every consumer that uses it).
     *
     * @param retention      rows older than this are purged
     * @param purgeInterval  pause between two purge runs
     * @param purgeBatchSize rows deleted per purge transaction
     * @param createSchema   apply the shipped DDL at startup (development and tests; production applies it itself)
     * @param dataSource     JNDI name of the business data's JTA datasource, which the ledger writes through
     */
    public record LedgerSettings(Duration retention, Duration purgeInterval, int purgeBatchSize, boolean createSchema,
                                 String dataSource) {
    }

    /**
     * The transactional outbox's relay ({@code onceonly.outbox.*}); its rows are on the ledger's
     * datasource ({@code onceonly.ledger.datasource}) and its connection takes the connector-wide
     * broker settings.
     *
     * @param sweepInterval  {@code sweep-interval}: pause between two sweeps
     * @param sweepAfter     {@code sweep-after}: the sweep takes rows written longer ago than this
     * @param batchSize      {@code batch-size}: rows per relay transaction
     * @param maxAttempts    {@code max-attempts}: broker refusals after which a row is parked
     * @param retention      {@code retention}: how long sent rows are kept
     * @param confirmTimeout {@code confirm-timeout}: how long a publish waits for the broker's confirm
     */
    public record OutboxSettings(Duration sweepInterval, Duration sweepAfter, int batchSize, int maxAttempts,
                                 Duration retention, Duration confirmTimeout) {
    }

    /**
     * What a guarded Jakarta Messaging listener ({@code onMessage(jakarta.jms.Message)}) does with a
     * refusal ({@code onceonly.jms.*}).
     *
     * @param deadLetterQueue   {@code dead-letter-queue}: JNDI name of the queue that CONFLICT and
     *                          REJECTED messages are moved to, in the listener's transaction, with
     *                          the reason; empty: they are rolled back like failures, so the
     *                          provider's redelivery limit and exception destination take them
     * @param connectionFactory {@code connection-factory}: JNDI name of the connection factory that
     *                          sends to it
     * @param retryDelay        {@code retry-delay}: how long a BUSY or RETRY delivery is held before
     *                          its rollback, so an immediate redelivery does not spend the provider's
     *                          redelivery limit while another holder is still at work
     */
    public record JmsSettings(String deadLetterQueue, String connectionFactory, Duration retryDelay) {
    }

    /**
     * Every guard-wide setting, each validated once at startup.
     *
     * @param global        the global settings
     * @param ledger        the ledger's (used only when a consumer has the ledger on)
     * @param outbox        the outbox relay's (used only when the application injects the outbox)
     * @param databaseStore the database store's; {@code null} unless {@code onceonly.store=database}
     * @param jms           those of guarded JMS listeners
     */
    public record Settings(Global global, LedgerSettings ledger, OutboxSettings outbox, DatabaseStoreSettings databaseStore,
                           JmsSettings jms) {
    }

    private final ConfigReader config;

    /**
     * A reader of OnceOnly's properties.
     *
     * @param config the application's configuration
     */
    public OnceOnlyConfig(Config config) {
        this.config = ConfigReader.of(config);
    }

    /**
     * Reads every guard-wide setting.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public Settings read() {
        Global global = global();
        return new Settings(global, ledger(), outbox(), global.store().equals("database") ? databaseStore() : null, jms());
    }

    /**
     * Reads the global settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public Global global() {
        boolean enabled = config.bool(ENABLED);
        String store = config.choice(STORE);
        String prefix = config.text(KEY_PREFIX);
        if (prefix.contains("{") || prefix.length() > 32) {
            throw config.invalid(KEY_PREFIX, prefix, "at most 32 characters without '{' (a Redis Cluster hash tag would put every key in one slot)");
        }
        return new Global(enabled, store, prefix, config.number(MEMORY_MAX_ENTRIES), config.bool(METRICS), config.bool(TRACING),
                config.duration(SHUTDOWN_TIMEOUT));
    }

    /**
     * Reads the ledger's settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public LedgerSettings ledger() {
        return new LedgerSettings(config.duration(LEDGER_RETENTION), config.duration(LEDGER_PURGE_INTERVAL),
                config.intValue(LEDGER_PURGE_BATCH_SIZE), config.bool(LEDGER_CREATE_SCHEMA), config.text(LEDGER_DATASOURCE));
    }

    /**
     * The claim store of the database-only mode ({@code onceonly.store=database}).
     *
     * @param dataSource    {@code onceonly.database-store.datasource}: JNDI name of a non-transactional
     *                      datasource on the database that has the table {@code onceonly_claim}
     * @param purgeInterval {@code onceonly.database-store.purge-interval}: pause between two purges of
     *                      expired claims
     */
    public record DatabaseStoreSettings(String dataSource, Duration purgeInterval) {
    }

    /**
     * Reads the database store's settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public DatabaseStoreSettings databaseStore() {
        Duration purge = config.duration(DATABASE_STORE_PURGE_INTERVAL);
        if (purge.isZero()) {
            throw config.invalid(DATABASE_STORE_PURGE_INTERVAL, "0", "a positive duration, e.g. 1m");
        }
        return new DatabaseStoreSettings(config.text(DATABASE_STORE_DATASOURCE), purge);
    }

    /**
     * Reads the outbox settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public OutboxSettings outbox() {
        Duration interval = config.duration(OUTBOX_SWEEP_INTERVAL);
        Duration after = config.duration(OUTBOX_SWEEP_AFTER);
        Duration confirm = config.duration(OUTBOX_CONFIRM_TIMEOUT);
        if (interval.isZero()) {
            throw config.invalid(OUTBOX_SWEEP_INTERVAL, "0", "a positive duration, e.g. 10s");
        }
        if (confirm.isZero()) {
            throw config.invalid(OUTBOX_CONFIRM_TIMEOUT, "0", "a positive duration, e.g. 10s");
        }
        if (after.compareTo(confirm) <= 0) {
            // The sweep must not take rows whose fast-path publish may still be waiting for its confirm.
            throw config.invalid(OUTBOX_SWEEP_AFTER, Durations.format(after),
                    "a duration longer than " + OUTBOX_CONFIRM_TIMEOUT.name() + " (" + Durations.format(confirm) + ")");
        }
        return new OutboxSettings(interval, after, config.intValue(OUTBOX_BATCH_SIZE), config.intValue(OUTBOX_MAX_ATTEMPTS),
                config.duration(OUTBOX_RETENTION), confirm);
    }

    /**
     * Reads the settings of guarded Jakarta Messaging listeners.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public JmsSettings jms() {
        Duration retryDelay = config.duration(JMS_RETRY_DELAY);
        if (retryDelay.compareTo(Duration.ofMinutes(1)) > 0) {
            // The delivery holds a listener thread and its transaction meanwhile.
            throw config.invalid(JMS_RETRY_DELAY, Durations.format(retryDelay),
                    "at most 1m (the listener thread and its transaction wait meanwhile)");
        }
        return new JmsSettings(config.string(JMS_DEAD_LETTER_QUEUE).orElse(""), config.text(JMS_CONNECTION_FACTORY), retryDelay);
    }
}
