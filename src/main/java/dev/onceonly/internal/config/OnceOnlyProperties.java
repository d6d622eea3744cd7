package dev.onceonly.internal.config;

import dev.onceonly.internal.config.Property.Type;

import java.util.function.UnaryOperator;

/**
 * The catalogue of the guard's own {@code onceonly.*} properties that {@code OnceOnlyConfig} reads:
 * global, ledger, database store, outbox and JMS settings. Per-consumer ones are in
 * {@link ConsumerProperties}; Redis and the connector list theirs in their own packages.
 */
public final class OnceOnlyProperties {

    private OnceOnlyProperties() {
    }

    /** What every table property says about the name's form and the shipped DDL (docs/shared-databases.md). */
    private static final String TABLE_RULE = "letters `a`-`z`, digits and `_`, at most 48 characters per part. Its indexes "
            + "and constraints are named after it. See [shared databases](shared-databases.md).";

    /** The guard's global settings. */
    public static final PropertySet GLOBAL = new PropertySet("Guard", "config.OnceOnlyConfig", "", UnaryOperator.identity());

    static final Property ENABLED = GLOBAL.add(Property.flag("onceonly.enabled", true,
            "Kill switch: `false` runs guarded methods unguarded (logs `ONCE0005W`)."));
    static final Property STORE = GLOBAL.add(Property.choice("onceonly.store", "redis",
            "The claim store: `redis`, `database` (the database-only mode) or `memory` (development only).",
            "redis", "memory", "database"));
    static final Property KEY_PREFIX = GLOBAL.add(Property.of("onceonly.key-prefix", Type.TEXT, "oo:",
            "Prefix of every claim key; at most 32 characters, without `{`."));
    /** Read where a store could claim without a fence: Redis's own configuration refuses that combination. */
    public static final Property FENCING = GLOBAL.add(Property.flag("onceonly.fencing", false,
            "Handlers rely on fencing tokens (`IdempotencyContext.fence()`, the `Idempotency-Fence` header): startup "
                    + "fails when the claim store would claim without one (Redis with `onceonly.redis.native-claim=auto`). "
                    + "The memory and database stores always give fences. See [fencing](fencing.md)."));
    static final Property SHUTDOWN_TIMEOUT = GLOBAL.add(Property.duration("onceonly.shutdown-timeout", "30s",
            "Stopping waits this long for guarded messages still running before the claim store closes."));
    static final Property METRICS = GLOBAL.add(Property.flag("onceonly.metrics.enabled", true,
            "MicroProfile Telemetry metrics of the guard and the outbox."));
    static final Property TRACING = GLOBAL.add(Property.flag("onceonly.tracing.enabled", true,
            "Spans of the guard's phases, and trace context across the broker."));
    static final Property MEMORY_MAX_ENTRIES = GLOBAL.add(Property.whole("onceonly.memory.max-entries", 100_000, 1, Long.MAX_VALUE,
            "Bound of the in-memory store."));

    /** The claim store of the database-only mode. */
    public static final PropertySet DATABASE_STORE = new PropertySet("Database store (`onceonly.store=database`)",
            "config.OnceOnlyConfig", "", UnaryOperator.identity());

    static final Property DATABASE_STORE_DATASOURCE = DATABASE_STORE.add(Property.of("onceonly.database-store.datasource",
            Type.TEXT, "jdbc/onceonly-claims",
            "JNDI name of a non-transactional datasource on the database that has the claim table."));
    static final Property DATABASE_STORE_TABLE = DATABASE_STORE.add(Property.of("onceonly.database-store.table", Type.TEXT,
            "onceonly_claim", "The claim table: a lower-case SQL name, optionally qualified by its schema (`claims.app1_claim`); "
                    + TABLE_RULE));
    static final Property DATABASE_STORE_PURGE_INTERVAL = DATABASE_STORE.add(Property.duration(
            "onceonly.database-store.purge-interval", "1m", "Pause between two purges of expired claims."));

    /** The ledger, shared by every consumer that uses it. */
    public static final PropertySet LEDGER = new PropertySet("Ledger", "config.OnceOnlyConfig", "", UnaryOperator.identity());

    static final Property LEDGER_DATASOURCE = LEDGER.add(Property.of("onceonly.ledger.datasource", Type.TEXT, "jdbc/onceonly",
            "JNDI name of the business data's JTA datasource, which the ledger (and the outbox) writes through."));
    static final Property LEDGER_TABLE = LEDGER.add(Property.of("onceonly.ledger.table", Type.TEXT, "onceonly_processed_message",
            "The ledger table: a lower-case SQL name, optionally qualified by its schema (`billing.onceonly_processed_message`); "
                    + TABLE_RULE));
    static final Property LEDGER_RETENTION = LEDGER.add(Property.duration("onceonly.ledger.retention", "7d",
            "Ledger rows older than this are purged."));
    static final Property LEDGER_PURGE_INTERVAL = LEDGER.add(Property.duration("onceonly.ledger.purge-interval", "1h",
            "Pause between two purge runs."));
    // At most 100000: one purge transaction must stay short.
    static final Property LEDGER_PURGE_BATCH_SIZE = LEDGER.add(Property.whole("onceonly.ledger.purge-batch-size", 1000, 1, 100_000,
            "Rows deleted per purge transaction."));
    static final Property LEDGER_CREATE_SCHEMA = LEDGER.add(Property.flag("onceonly.ledger.create-schema", false,
            "Apply the shipped DDL of each part in use at startup, with the configured table names (development and tests; "
                    + "production applies it itself)."));

    /** The transactional outbox's relay. */
    public static final PropertySet OUTBOX = new PropertySet("Outbox relay", "config.OnceOnlyConfig",
            "Its rows are on the ledger's datasource (`onceonly.ledger.datasource`); its broker connection takes the "
                    + "connector-wide broker settings (see the connector's connection settings).", UnaryOperator.identity());

    static final Property OUTBOX_TABLE = OUTBOX.add(Property.of("onceonly.outbox.table", Type.TEXT, "onceonly_outbox",
            "The outbox table, on the ledger's datasource: a lower-case SQL name, optionally qualified by its schema; "
                    + TABLE_RULE));
    static final Property OUTBOX_SWEEP_INTERVAL = OUTBOX.add(Property.duration("onceonly.outbox.sweep-interval", "10s",
            "Pause between two sweeps."));
    static final Property OUTBOX_SWEEP_AFTER = OUTBOX.add(Property.duration("onceonly.outbox.sweep-after", "30s",
            "The sweep takes rows written longer ago than this; longer than `onceonly.outbox.confirm-timeout`."));
    static final Property OUTBOX_BATCH_SIZE = OUTBOX.add(Property.whole("onceonly.outbox.batch-size", 100, 1, 10_000,
            "Rows per relay transaction."));
    static final Property OUTBOX_MAX_ATTEMPTS = OUTBOX.add(Property.whole("onceonly.outbox.max-attempts", 5, 1, 1_000,
            "Broker refusals after which a row is parked."));
    static final Property OUTBOX_RETENTION = OUTBOX.add(Property.duration("onceonly.outbox.retention", "1d",
            "How long sent rows are kept, then purged by the sweep."));
    static final Property OUTBOX_CONFIRM_TIMEOUT = OUTBOX.add(Property.duration("onceonly.outbox.confirm-timeout", "10s",
            "How long a publish waits for the broker's confirm."));
    static final Property OUTBOX_GATHER = OUTBOX.add(Property.duration("onceonly.outbox.gather", "10ms",
            "Under load the relay gathers rows: a relay transaction starts no sooner than this after the last one ended, "
                    + "with the rows committed until then, so that one transaction sends several. A row committed after the "
                    + "relay was idle for longer goes out at once, and so does a whole `batch-size`. At most `1s`; `0`: "
                    + "every row at once."));

    /** What a guarded Jakarta Messaging listener does with a refusal. */
    public static final PropertySet JMS = new PropertySet("Jakarta Messaging (JMS) listeners", "config.OnceOnlyConfig", "",
            UnaryOperator.identity());

    static final Property JMS_DEAD_LETTER_QUEUE = JMS.add(Property.of("onceonly.jms.dead-letter-queue", Type.TEXT, null,
            "JNDI name of the queue CONFLICT and REJECTED messages are moved to, in the listener's transaction, with the "
                    + "reason; unset: they are rolled back like failures, so the provider's redelivery limit takes them."));
    static final Property JMS_CONNECTION_FACTORY = JMS.add(Property.of("onceonly.jms.connection-factory", Type.TEXT,
            "java:comp/DefaultJMSConnectionFactory", "JNDI name of the connection factory that sends to the dead-letter queue."));
    static final Property JMS_RETRY_DELAY = JMS.add(Property.duration("onceonly.jms.retry-delay", "1s",
            "How long a BUSY or RETRY delivery is held before its rollback (at most `1m`: the listener thread and its "
                    + "transaction wait meanwhile)."));
}
