package dev.onceonly.jpa;

import dev.onceonly.api.OutboxMessage;
import dev.onceonly.spi.OutboxRecord;
import dev.onceonly.spi.OutboxStore;
import jakarta.persistence.EntityManager;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.jdbc.ReturningWork;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The outbox table {@code onceonly_outbox} (DDL in {@code META-INF/onceonly/ddl/}), written with plain
 * JDBC on the connection of the current transaction's session, like the ledger's insert.
 *
 * <p>Times are stored as epoch milliseconds ({@code BIGINT}): the relay and the purge compare them
 * across instances, and a number means the same in every database and time zone.
 *
 * <p>Rows are selected {@code FOR UPDATE SKIP LOCKED} (PostgreSQL, MariaDB 10.6+, H2 2.x): a relay
 * holds the rows it publishes until it marked them, and another relay passes them by instead of
 * waiting or publishing them too. Which of them may go out (no earlier pending row of their source
 * left out) is then read with a plain query on {@code (source_key, id)}: a lock query cannot tell
 * a row another relay holds from one that is not there.
 */
public final class JpaOutboxStore implements OutboxStore {

    /** Row states. */
    static final int PENDING = 0;
    static final int SENT = 1;
    static final int PARKED = 2;

    private static final String INSERT = "insert into onceonly_outbox (message_id, source_key, exchange_name, routing_key,"
            + " content_type, correlation_id, persistent, headers, body, state, created_at, attempts)"
            + " values (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 0)";
    private static final String COLUMNS = "select id, message_id, source_key, exchange_name, routing_key, content_type,"
            + " correlation_id, persistent, headers, body, created_at, attempts from onceonly_outbox";
    private static final String MARK_SENT = "update onceonly_outbox set state = 1, sent_at = ? where id = ?";
    private static final String MARK_REFUSED = "update onceonly_outbox set attempts = attempts + 1, last_error = ?,"
            + " state = case when attempts + 1 >= ? then 2 else 0 end where id = ?";
    private static final int MAX_ERROR = 500;

    private final Supplier<EntityManager> entityManagers;
    private final NewTransaction newTransaction;

    /**
     * @param entityManagers the entity manager of the calling thread's current transaction, on the
     *                       business data's datasource (such as {@link LedgerSessions#current})
     * @param newTransaction runs each relay, purge batch and count in a transaction of its own
     */
    public JpaOutboxStore(Supplier<EntityManager> entityManagers, NewTransaction newTransaction) {
        this.entityManagers = Objects.requireNonNull(entityManagers, "entityManagers");
        this.newTransaction = Objects.requireNonNull(newTransaction, "newTransaction");
    }

    @Override
    public long append(OutboxRecord r) {
        return work(c -> {
            try (PreparedStatement s = c.prepareStatement(INSERT, new String[] {"id"})) {
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
                s.executeUpdate();
                try (ResultSet keys = s.getGeneratedKeys()) {
                    if (!keys.next()) {
                        throw new SQLException("the database returned no id for the outbox row");
                    }
                    return keys.getLong(1);
                }
            }
        });
    }

    @Override
    public Optional<OutboxRecord> find(String messageId) {
        return work(c -> {
            try (PreparedStatement s = c.prepareStatement(COLUMNS + " where message_id = ?")) {
                s.setString(1, messageId);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? Optional.of(record(r)) : Optional.empty();
                }
            }
        });
    }

    @Override
    public Relayed relay(Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish,
                         int maxAttempts, Instant now) {
        if (selection.limit() < 1) {
            return Relayed.NONE;
        }
        return newTransaction.call(() -> work(c -> {
            List<OutboxRecord> locked = lock(c, selection);
            if (locked.isEmpty()) {
                return Relayed.NONE;
            }
            Relayed relayed = new Relayed(locked.size(), locked.get(locked.size() - 1).id());
            List<OutboxRecord> rows = inOrder(c, locked);
            if (rows.isEmpty()) {
                return relayed;
            }
            Map<Long, Optional<Failure>> answers = publish.apply(rows);
            List<Long> sent = new ArrayList<>();
            Map<Long, String> refused = new LinkedHashMap<>();
            for (OutboxRecord row : rows) {
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
                try (PreparedStatement s = c.prepareStatement(MARK_SENT)) {
                    for (Long id : sent) {
                        s.setLong(1, now.toEpochMilli());
                        s.setLong(2, id);
                        s.addBatch();
                    }
                    s.executeBatch();
                }
            }
            if (!refused.isEmpty()) {
                try (PreparedStatement s = c.prepareStatement(MARK_REFUSED)) {
                    for (Map.Entry<Long, String> e : refused.entrySet()) {
                        s.setString(1, e.getValue());
                        s.setInt(2, maxAttempts);
                        s.setLong(3, e.getKey());
                        s.addBatch();
                    }
                    s.executeBatch();
                }
            }
            return relayed;
        }));
    }

    /**
     * The locked rows that may go out now: of each source, the locked rows up to its first earlier
     * pending row this relay did not lock (another relay holds it, or the selection left it out).
     * Read without locking, after the lock: a row seen pending may have been sent since (it holds
     * back one round more), a row seen sent or parked stays so.
     */
    private static List<OutboxRecord> inOrder(Connection c, List<OutboxRecord> locked) throws SQLException {
        Set<Long> lockedIds = new HashSet<>();
        Set<String> sources = new LinkedHashSet<>();
        for (OutboxRecord row : locked) {
            lockedIds.add(row.id());
            sources.add(row.source());
        }
        Map<String, Long> firstGap = new HashMap<>();
        try (PreparedStatement s = c.prepareStatement("select source_key, id from onceonly_outbox where state = 0 and id < ?"
                + " and source_key in (" + "?,".repeat(sources.size() - 1) + "?)")) {
            s.setLong(1, locked.get(locked.size() - 1).id());
            int i = 2;
            for (String source : sources) {
                s.setString(i++, source);
            }
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    long id = r.getLong(2);
                    if (!lockedIds.contains(id)) {
                        firstGap.merge(r.getString(1), id, Math::min);
                    }
                }
            }
        }
        if (firstGap.isEmpty()) {
            return locked;
        }
        return locked.stream().filter(row -> row.id() < firstGap.getOrDefault(row.source(), Long.MAX_VALUE)).toList();
    }

    /** Locks and reads the selected pending rows, in id order, passing by rows another relay holds. */
    private static List<OutboxRecord> lock(Connection c, Selection selection) throws SQLException {
        StringBuilder sql = new StringBuilder(COLUMNS).append(" where state = 0");
        if (!selection.ids().isEmpty()) {
            sql.append(" and id in (").append("?,".repeat(selection.ids().size() - 1)).append("?)");
        } else {
            sql.append(" and created_at < ? and id > ?");
        }
        sql.append(" order by id limit ? for update skip locked");
        try (PreparedStatement s = c.prepareStatement(sql.toString())) {
            int i = 1;
            if (!selection.ids().isEmpty()) {
                for (Long id : selection.ids()) {
                    s.setLong(i++, id);
                }
            } else {
                s.setLong(i++, selection.createdBefore().toEpochMilli());
                s.setLong(i++, selection.afterId());
            }
            s.setInt(i, selection.limit());
            List<OutboxRecord> rows = new ArrayList<>();
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    rows.add(record(r));
                }
            }
            return rows;
        }
    }

    private static OutboxRecord record(ResultSet r) throws SQLException {
        String messageId = r.getString(2);
        OutboxMessage message = new OutboxMessage(r.getString(4), r.getString(5), r.getBytes(10), r.getString(6), messageId,
                r.getString(7), r.getBoolean(8), OutboxHeaders.fromJson(r.getString(9)));
        return new OutboxRecord(r.getLong(1), messageId, r.getString(3), message, Instant.ofEpochMilli(r.getLong(11)),
                r.getInt(12));
    }

    @Override
    public long purge(Instant olderThan, int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
        }
        long total = 0;
        int deleted;
        do {
            deleted = newTransaction.call(() -> work(c -> deleteBatch(c, olderThan, batchSize)));
            total += deleted;
        } while (deleted >= batchSize);
        return total;
    }

    /** The oldest sent rows, by id, up to a batch: read, then deleted by id (portable, unlike {@code DELETE … LIMIT}). */
    private static int deleteBatch(Connection c, Instant olderThan, int batchSize) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("select id from onceonly_outbox where state = 1 and sent_at < ?"
                + " order by id limit ?")) {
            s.setLong(1, olderThan.toEpochMilli());
            s.setInt(2, batchSize);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    ids.add(r.getLong(1));
                }
            }
        }
        if (ids.isEmpty()) {
            return 0;
        }
        try (PreparedStatement d = c.prepareStatement("delete from onceonly_outbox where state = 1 and id in ("
                + "?,".repeat(ids.size() - 1) + "?)")) {
            for (int i = 0; i < ids.size(); i++) {
                d.setLong(i + 1, ids.get(i));
            }
            return d.executeUpdate();
        }
    }

    @Override
    public Counts counts() {
        return newTransaction.call(() -> work(c -> {
            long pending = 0;
            long parked = 0;
            try (PreparedStatement s = c.prepareStatement("select state, count(*) from onceonly_outbox where state in (0, 2) group by state");
                 ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    if (r.getInt(1) == PENDING) {
                        pending = r.getLong(2);
                    } else if (r.getInt(1) == PARKED) {
                        parked = r.getLong(2);
                    }
                }
            }
            return new Counts(pending, parked);
        }));
    }

    @Override
    public void checkReady() {
        newTransaction.call(() -> work(c -> {
            try (PreparedStatement s = c.prepareStatement(COLUMNS + " where id = -1"); ResultSet r = s.executeQuery()) {
                return r.next();
            }
        }));
    }

    private <T> T work(ReturningWork<T> work) {
        return entityManagers.get().unwrap(SharedSessionContractImplementor.class).doReturningWork(work);
    }
}
