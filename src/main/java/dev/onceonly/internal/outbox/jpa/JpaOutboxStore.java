package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.ledger.jpa.LedgerSessions;
import dev.onceonly.internal.jta.NewTransaction;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.support.Databases;
import dev.onceonly.internal.support.UniqueViolation;
import jakarta.persistence.EntityManager;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.jdbc.ReturningWork;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The outbox table ({@code onceonly.outbox.table}, DDL in {@code META-INF/onceonly/ddl/}), written with plain
 * JDBC on the connection of the current transaction's session, like the ledger's insert.
 *
 * <p>Times are stored as epoch milliseconds ({@code BIGINT}): the relay and the purge compare them
 * across instances, and a number means the same in every database and time zone.
 *
 * <p>Rows are selected {@code FOR UPDATE SKIP LOCKED} (PostgreSQL, MariaDB 10.6+, H2 2.x): a relay
 * holds the rows it publishes until it marked them, and another relay passes them by instead of
 * waiting or publishing them too. The same query says of each row whether an earlier pending row of
 * its source exists (a subquery, which locks nothing); only when one does is which of them may go out
 * (no earlier pending row of their source left out) read with a second, plain query on
 * {@code (source_key, id)}: a lock query cannot tell a row another relay holds from one that is not
 * there, nor one it locked itself from one it passed by.
 *
 * <p>Applications that share the database share the table: each row carries its application's
 * scope (column {@code app_scope}), and the relay, the purge and the counts of a store touch only
 * rows of its scope, and rows with the scope {@code ''}, written before the column was there (the
 * shipped DDL adds it to such a table with that default), which every application takes as before.
 * Message ids stay unique across the whole table, and {@link #find} and the order of a source look
 * at every row.
 */
public final class JpaOutboxStore implements OutboxStore {

    /** Row states. */
    static final int PENDING = 0;
    static final int SENT = 1;
    static final int PARKED = 2;

    private static final int MAX_ERROR = 500;

    private final Supplier<EntityManager> entityManagers;
    private final NewTransaction newTransaction;
    private final String scope;
    private final OutboxRows rows;
    private final String insert;
    private final String insertOnConflict;
    /** Whether the database is PostgreSQL; null until the first append read it. */
    private volatile Boolean postgresql;
    private final String markSent;
    private final String markRefused;

    /**
     * @param table          the outbox table ({@code onceonly.outbox.table}), already validated as an SQL name
     * @param entityManagers the entity manager of the calling thread's current transaction, on the
     *                       business data's datasource (such as {@link LedgerSessions#current})
     * @param newTransaction runs each relay, purge batch and count in a transaction of its own
     * @param scope          the application's scope, written into its rows: its key prefix
     *                       ({@code onceonly.key-prefix}); at most 64 characters, not empty (that
     *                       is the scope of rows from before there were scopes)
     */
    public JpaOutboxStore(String table, Supplier<EntityManager> entityManagers, NewTransaction newTransaction, String scope) {
        this.entityManagers = Objects.requireNonNull(entityManagers, "entityManagers");
        this.newTransaction = Objects.requireNonNull(newTransaction, "newTransaction");
        if (scope.isEmpty() || scope.length() > 64) {
            throw new IllegalArgumentException("an outbox scope has 1 to 64 characters: '" + scope + "'");
        }
        this.scope = scope;
        this.rows = new OutboxRows(Objects.requireNonNull(table, "table"));
        this.insert = "insert into " + table + " (message_id, source_key, exchange_name, routing_key,"
                + " content_type, correlation_id, persistent, headers, body, state, created_at, attempts, app_scope)"
                + " values (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0, ?)";
        this.insertOnConflict = insert + " on conflict (message_id) do nothing";
        this.markSent = "update " + table + " set state = 1, sent_at = ? where id = ?";
        // The state first: MariaDB evaluates assignments left to right, so after "attempts = attempts + 1"
        // the condition would count this refusal twice and park a row one refusal early.
        this.markRefused = "update " + table + " set state = case when attempts + 1 >= ? then 2 else 0 end,"
                + " attempts = attempts + 1, last_error = ? where id = ?";
    }

    /**
     * {@inheritDoc} One statement. A row with the same message id that another transaction has not
     * committed makes it wait for that transaction, then write (rolled back) or answer empty
     * (committed). On PostgreSQL {@code insert … on conflict (message_id) do nothing}: there a failed
     * statement would abort the business transaction. On other databases (MariaDB, H2) a plain insert
     * whose unique violation is the answer: a failed statement is undone alone there, the transaction
     * goes on. Not MariaDB's {@code INSERT IGNORE}: it would turn unrelated errors into warnings. The
     * database is read from the first connection.
     */
    @Override
    public OptionalLong append(OutboxRecord r) {
        return work(c -> {
            boolean onConflict = onConflict(c);
            try (PreparedStatement s = c.prepareStatement(onConflict ? insertOnConflict : insert, new String[] {"id"})) {
                OutboxMessage m = r.message();
                s.setString(1, r.messageId());
                s.setString(2, r.source());
                s.setString(3, m.exchange());
                s.setString(4, m.routingKey());
                s.setString(5, m.contentType());
                s.setString(6, m.correlationId());
                s.setBoolean(7, m.persistent());
                s.setString(8, OutboxHeaders.toJson(m.headers()));
                s.setBytes(9, m.body());
                s.setLong(10, r.createdAt().toEpochMilli());
                s.setString(11, scope);
                if (!inserted(s)) {
                    return OptionalLong.empty(); // the message id's row is there
                }
                try (ResultSet keys = s.getGeneratedKeys()) {
                    if (!keys.next()) {
                        throw new SQLException("the database returned no id for the outbox row");
                    }
                    return OptionalLong.of(keys.getLong(1));
                }
            }
        });
    }

    /** Runs the insert: whether it wrote the row, false when a row with its message id is there. */
    private static boolean inserted(PreparedStatement insert) throws SQLException {
        try {
            return insert.executeUpdate() > 0;
        } catch (SQLException e) {
            if (UniqueViolation.find(e).isEmpty()) {
                throw e;
            }
            return false;
        }
    }

    /** Whether the database takes {@code on conflict … do nothing} (PostgreSQL), read once from {@code c}. */
    private boolean onConflict(Connection c) throws SQLException {
        Boolean known = postgresql;
        if (known == null) {
            known = Databases.postgresql(c);
            postgresql = known;
        }
        return known;
    }

    @Override
    public Optional<OutboxRecord> find(String messageId) {
        return work(c -> rows.find(c, messageId));
    }

    @Override
    public Relayed relay(Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish,
                         int maxAttempts, Instant now) {
        if (selection.limit() < 1) {
            return Relayed.NONE;
        }
        return newTransaction.call(() -> work(c -> {
            OutboxRows.Locked locked = rows.lock(c, selection, scope);
            if (locked.rows().isEmpty()) {
                return Relayed.NONE;
            }
            Relayed relayed = new Relayed(locked.rows().size(), locked.rows().get(locked.rows().size() - 1).id());
            List<OutboxRecord> goOut = rows.mayGoOut(c, locked);
            if (goOut.isEmpty()) {
                return relayed;
            }
            Map<Long, Optional<Failure>> answers = publish.apply(goOut);
            List<Long> sent = new ArrayList<>();
            Map<Long, String> refused = new LinkedHashMap<>();
            for (OutboxRecord row : goOut) {
                Optional<Failure> answer = answers.get(row.id());
                if (answer == null) {
                    continue; // not tried, or the broker could not be asked: stays pending as it was
                }
                if (answer.isEmpty()) {
                    sent.add(row.id());
                } else {
                    String reason = answer.get().reason();
                    refused.put(row.id(), reason.length() > MAX_ERROR ? reason.substring(0, MAX_ERROR) : reason);
                }
            }
            // Each statement is prepared only when it has rows: Liberty drains a statement's results
            // when it is closed, and MariaDB's driver fails that for a statement never executed.
            if (!sent.isEmpty()) {
                try (PreparedStatement s = c.prepareStatement(markSent)) {
                    for (Long id : sent) {
                        s.setLong(1, now.toEpochMilli());
                        s.setLong(2, id);
                        s.addBatch();
                    }
                    s.executeBatch();
                }
            }
            if (!refused.isEmpty()) {
                try (PreparedStatement s = c.prepareStatement(markRefused)) {
                    for (Map.Entry<Long, String> e : refused.entrySet()) {
                        s.setInt(1, maxAttempts);
                        s.setString(2, e.getValue());
                        s.setLong(3, e.getKey());
                        s.addBatch();
                    }
                    s.executeBatch();
                }
            }
            return relayed;
        }));
    }

    @Override
    public long purge(Instant olderThan, int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
        }
        long total = 0;
        int deleted;
        do {
            deleted = newTransaction.call(() -> work(c -> rows.deleteSent(c, olderThan, scope, batchSize)));
            total += deleted;
        } while (deleted >= batchSize);
        return total;
    }

    @Override
    public Counts counts() {
        return newTransaction.call(() -> work(c -> {
            long pending = 0;
            long parked = 0;
            try (PreparedStatement s = c.prepareStatement("select state, count(*) from " + rows.table() + " where state in (0, 2)"
                    + OutboxRows.IN_SCOPE + " group by state")) {
                s.setString(1, scope);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        if (r.getInt(1) == PENDING) {
                            pending = r.getLong(2);
                        } else if (r.getInt(1) == PARKED) {
                            parked = r.getLong(2);
                        }
                    }
                }
            }
            return new Counts(pending, parked);
        }));
    }

    /**
     * {@inheritDoc} A table without {@code app_scope} was created by an earlier version: the message
     * says to apply the shipped DDL again, which adds the column.
     */
    @Override
    public void checkReady() {
        newTransaction.call(() -> work(c -> {
            try (PreparedStatement s = c.prepareStatement(rows.columns() + " where id = -1"); ResultSet r = s.executeQuery()) {
                r.next();
            }
            try (PreparedStatement s = c.prepareStatement("select app_scope from " + rows.table() + " where id = -1");
                 ResultSet r = s.executeQuery()) {
                return r.next();
            } catch (SQLException e) {
                throw new IllegalStateException(rows.table() + " has no column app_scope (the table was created by an earlier"
                        + " version): apply META-INF/onceonly/ddl/<database>.sql again, which adds it; " + e.getMessage(), e);
            }
        }));
    }

    private <T> T work(ReturningWork<T> work) {
        return entityManagers.get().unwrap(SharedSessionContractImplementor.class).doReturningWork(work);
    }
}
