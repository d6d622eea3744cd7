package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.internal.jta.NewTransaction;
import dev.onceonly.spi.ResultStore;
import jakarta.persistence.EntityManager;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@link ResultStore} in the ledger: a result is two nullable columns of its key's ledger row,
 * {@code result_json} (the JSON) and {@code result_until} (until when it is given, epoch
 * milliseconds), written by an update in the business transaction that inserted the row, so it
 * commits or rolls back with the effect. It goes when the ledger's purge deletes the row.
 *
 * <p>Like {@link JpaLedger}, it works through the entity manager of the calling thread's current
 * transaction; its reads run in a new transaction ({@link NewTransaction}).
 */
public final class JpaResultStore implements ResultStore {

    /** The columns a table created before results were kept lacks; {@code docs/ledger.md} has their {@code ALTER TABLE}. */
    public static final String COLUMNS = "result_json, result_until";

    private final String table;
    private final String update;
    private final String select;
    private final Supplier<EntityManager> entityManagers;
    private final NewTransaction newTransaction;
    private final Clock clock;

    /**
     * A result store in the ledger's table.
     *
     * @param table          the ledger table ({@code onceonly.ledger.table}), validated as an SQL name
     * @param entityManagers the entity manager of the calling thread's current transaction, as the ledger's
     * @param newTransaction runs the reads in a transaction of their own
     * @param clock          the time retention is measured by
     */
    public JpaResultStore(String table, Supplier<EntityManager> entityManagers, NewTransaction newTransaction, Clock clock) {
        this.table = Objects.requireNonNull(table, "table");
        this.update = "update " + table + " set result_json = ?, result_until = ? where msg_id = ?";
        this.select = "select " + COLUMNS + " from " + table + " where msg_id = ?";
        this.entityManagers = Objects.requireNonNull(entityManagers, "entityManagers");
        this.newTransaction = Objects.requireNonNull(newTransaction, "newTransaction");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public String name() {
        return "ledger";
    }

    @Override
    public boolean transactional() {
        return true;
    }

    /**
     * Updates the key's row in the caller's transaction, on the ledger's connection.
     *
     * @param key       the call's key, whose ledger row this transaction inserted
     * @param result    the result as JSON text
     * @param retention how long {@link #get} answers it
     * @throws IllegalStateException when the transaction holds no row of the key (the ledger row is
     *         inserted first in it), or the database refuses the update
     */
    @Override
    public void put(String key, String result, Duration retention) {
        long until = clock.millis() + retention.toMillis();
        int updated = session().doReturningWork(c -> {
            try (PreparedStatement s = c.prepareStatement(update)) {
                s.setString(1, result);
                s.setLong(2, until);
                s.setString(3, key);
                return s.executeUpdate();
            }
        });
        if (updated != 1) {
            throw new IllegalStateException("no ledger row of the key in this transaction to keep its result with (" + updated + " rows)");
        }
    }

    @Override
    public Optional<String> get(String key) {
        long now = clock.millis();
        return newTransaction.call(() -> session().doReturningWork(c -> {
            try (PreparedStatement s = c.prepareStatement(select)) {
                s.setString(1, key);
                try (ResultSet row = s.executeQuery()) {
                    if (!row.next()) {
                        return Optional.<String>empty();
                    }
                    String json = row.getString(1);
                    long until = row.getLong(2);
                    return json == null || until <= now ? Optional.<String>empty() : Optional.of(json);
                }
            }
        }));
    }

    /**
     * Checks, once at startup, that the table has the result columns.
     *
     * @return what is missing, or empty when the columns are there
     */
    public Optional<String> problem() {
        try {
            get("");
            return Optional.empty();
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            return Optional.of("the ledger table " + table + " with the columns " + COLUMNS + " (reading them failed with " + root + ")");
        }
    }

    private SharedSessionContractImplementor session() {
        return entityManagers.get().unwrap(SharedSessionContractImplementor.class);
    }
}
