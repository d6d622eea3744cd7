package dev.onceonly.internal.cdi;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.jdbc.JdbcClaimStore;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.internal.redis.RedisSettings;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.internal.support.LogId;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Clock;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Opens the claim store {@code onceonly.store} names, with its batches where it has them: Redis
 * pipelines its own; the memory store is batched by a loop that lets done marks ride with claims (in
 * process they add no wait); the database store has none, and the engine loops over its primitives.
 */
final class ClaimStores {

    private ClaimStores() {
    }

    static ClaimStore open(OnceOnlyConfig.Global global, RedisSettings redis, OnceOnlyConfig.DatabaseStoreSettings database,
                           OnceOnlyConfig.LedgerSettings ledger, Clock clock, ScheduledExecutorService scheduler) {
        return switch (global.store()) {
            case "memory" -> BatchClaimStore.inProcess(InMemoryClaimStore.forDevelopment(global.memoryMaxEntries(), clock));
            case "redis" -> RedisClaimStore.connect(redis);
            case "database" -> {
                DataSource dataSource = dataSource(database.dataSource());
                if (ledger.createSchema()) {
                    applySchema(dataSource, database);
                }
                JdbcClaimStore store = new JdbcClaimStore(dataSource, database.table(), clock, scheduler, database.purgeInterval());
                java.util.Optional<String> problem = store.problem();
                if (problem.isPresent()) {
                    store.close();
                    throw new InvalidConfigurationException("onceonly.database-store.datasource", database.dataSource(),
                            "a non-transactional datasource on a database with the table " + database.table()
                                    + " (onceonly.database-store.table; DDL in META-INF/onceonly/ddl/): " + problem.get());
                }
                yield store;
            }
            default -> throw new IllegalStateException("onceonly.store was validated: " + global.store());
        };
    }

    /** The claim table only: the other parts' tables are created by the parts that use them. */
    private static void applySchema(DataSource dataSource, OnceOnlyConfig.DatabaseStoreSettings database) {
        try {
            LogId.ONCE0406I.log(LedgerSchema.apply(dataSource, LedgerSchema.Part.CLAIMS, database.table()));
        } catch (SQLException e) {
            throw new IllegalStateException("onceonly.ledger.create-schema=true, but applying the DDL of " + database.table()
                    + " through " + database.dataSource() + " failed: " + e, e);
        }
    }

    private static DataSource dataSource(String jndiName) {
        try {
            return (DataSource) new InitialContext().lookup(jndiName);
        } catch (NamingException | ClassCastException e) {
            throw new InvalidConfigurationException("onceonly.database-store.datasource", jndiName,
                    "the JNDI name of a non-transactional datasource (transactional=\"false\"); the lookup failed with " + e);
        }
    }
}
