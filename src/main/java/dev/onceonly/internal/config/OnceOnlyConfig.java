package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.time.Duration;
import java.util.regex.Pattern;

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

    /** A table name's form: see {@link #table}. */
    private static final Pattern TABLE_NAME = Pattern.compile("([a-z_][a-z0-9_]{0,47}\\.)?[a-z_][a-z0-9_]{0,47}");

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
     * @param table          the ledger table's name, optionally {@code schema.table}, a valid SQL name
     */
    public record LedgerSettings(Duration retention, Duration purgeInterval, int purgeBatchSize, boolean createSchema,
                                 String dataSource, String table) {
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
     * @param table          {@code table}: the outbox table's name, optionally {@code schema.table}, a valid SQL name
     * @param gather         {@code gather}: the least time from the end of one fast-path relay transaction to
     *                       the start of the next, unless a whole batch waits; zero: no wait
     */
    public record OutboxSettings(Duration sweepInterval, Duration sweepAfter, int batchSize, int maxAttempts,
                                 Duration retention, Duration confirmTimeout, String table, Duration gather) {
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
        LedgerSettings ledger = ledger();
        OutboxSettings outbox = outbox();
        if (ledger.table().equals(outbox.table())) {
            throw config.invalid(OUTBOX_TABLE, outbox.table(), "a table other than the ledger's (" + LEDGER_TABLE.name() + ")");
        }
        DatabaseStoreSettings claims = global.store().equals("database") ? databaseStore() : null;
        if (claims != null && (claims.table().equals(ledger.table()) || claims.table().equals(outbox.table()))) {
            throw config.invalid(DATABASE_STORE_TABLE, claims.table(), "a table other than the ledger's and the outbox's");
        }
        return new Settings(global, ledger, outbox, claims, jms());
    }

    /**
     * A table name as the shipped DDL and every statement write it, unquoted: {@code table} or
     * {@code schema.table}, each part lower-case letters, digits and {@code _}, not starting with a
     * digit, at most 48 characters (the DDL names indexes {@code <table>_<suffix>}, and PostgreSQL cuts
     * names at 63). Lower case only, because an unquoted name is folded by PostgreSQL (to lower case)
     * and H2 (to upper case) but kept as written by MariaDB on Linux: lower-case names mean the same
     * table everywhere, in the hand-run DDL as in the library's statements.
     */
    private String table(Property p) {
        String name = config.text(p);
        if (!TABLE_NAME.matcher(name).matches()) {
            throw config.invalid(p, name, "a lower-case SQL name, table or schema.table: letters a-z, digits and _, not"
                    + " starting with a digit, at most 48 characters per part");
        }
        return name;
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
                config.intValue(LEDGER_PURGE_BATCH_SIZE), config.bool(LEDGER_CREATE_SCHEMA), config.text(LEDGER_DATASOURCE),
                table(LEDGER_TABLE));
    }

    /**
     * The claim store of the database-only mode ({@code onceonly.store=database}).
     *
     * @param dataSource    {@code onceonly.database-store.datasource}: JNDI name of a non-transactional
     *                      datasource on the database that has the claim table
     * @param purgeInterval {@code onceonly.database-store.purge-interval}: pause between two purges of
     *                      expired claims
     * @param table         {@code onceonly.database-store.table}: the claim table's name, optionally
     *                      {@code schema.table}, a valid SQL name
     */
    public record DatabaseStoreSettings(String dataSource, Duration purgeInterval, String table) {
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
        return new DatabaseStoreSettings(config.text(DATABASE_STORE_DATASOURCE), purge, table(DATABASE_STORE_TABLE));
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
                config.duration(OUTBOX_RETENTION), confirm, table(OUTBOX_TABLE), gather());
    }

    /** {@code onceonly.outbox.gather}: a duration up to a second, or {@code 0} (a duration otherwise must be positive). */
    private Duration gather() {
        if (config.string(OUTBOX_GATHER).map(v -> v.trim().equals("0")).orElse(false)) {
            return Duration.ZERO;
        }
        Duration gather = config.duration(OUTBOX_GATHER);
        if (gather.compareTo(Duration.ofSeconds(1)) > 0) {
            // Every row committed under load would wait that long before it goes out.
            throw config.invalid(OUTBOX_GATHER, Durations.format(gather), "0 or a duration of at most 1s, e.g. 10ms");
        }
        return gather;
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
