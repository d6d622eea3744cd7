package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore.Selection;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads rows of the outbox table for the JPA outbox store: a row by its message id, the relay's
 * selection, locked, and which of the locked rows may go out without breaking their source's order;
 * and deletes the purge's batches of sent rows.
 */
final class OutboxRows {

    /** The rows of the store's scope (its first parameter), and those written before there were scopes. */
    static final String IN_SCOPE = " and app_scope in (?, '')";

    /** The columns {@link #read} reads, in its order. */
    private static final String READ = "id, message_id, source_key, exchange_name, routing_key, content_type,"
            + " correlation_id, persistent, headers, body, created_at, attempts";

    private final String table;
    private final String columns;
    /** The locked read's columns: {@link #READ}, then whether an earlier pending row of the row's source exists. */
    private final String lockColumns;

    /** @param table the outbox table, validated as an SQL name */
    OutboxRows(String table) {
        this.table = table;
        this.columns = "select " + READ + " from " + table;
        // A subquery without a locking clause of its own locks nothing (PostgreSQL, MariaDB, H2): rows
        // it reads stay free for the relay that holds them, or for the next one.
        this.lockColumns = "select " + READ + ", exists (select 1 from " + table + " e where e.source_key = o.source_key"
                + " and e.state = 0 and e.id < o.id) from " + table + " o";
    }

    /**
     * Rows a relay locked, in id order.
     *
     * @param rows           the rows
     * @param earlierPending whether any of them had an earlier pending row of its source when they
     *                       were read (locked by this relay or not)
     */
    record Locked(List<OutboxRecord> rows, boolean earlierPending) {
    }

    /** {@return the outbox table} */
    String table() {
        return table;
    }

    /** {@return the select of the columns {@link #read} reads, in its order, from the table; a where clause may follow} */
    String columns() {
        return columns;
    }

    /** {@return the row of {@code messageId}, read without locking} */
    Optional<OutboxRecord> find(Connection c, String messageId) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(columns + " where message_id = ?")) {
            s.setString(1, messageId);
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? Optional.of(read(r)) : Optional.empty();
            }
        }
    }

    /**
     * The locked rows that may go out now: of each source, the locked rows up to its first earlier
     * pending row this relay did not lock (another relay holds it, or the selection left it out).
     * Read without locking, after the lock: a row seen pending may have been sent since (it holds
     * back one round more), a row seen sent or parked stays so. Nothing is read when no locked row had
     * an earlier pending row of its source.
     */
    List<OutboxRecord> mayGoOut(Connection c, Locked lockedRows) throws SQLException {
        List<OutboxRecord> locked = lockedRows.rows();
        if (!lockedRows.earlierPending()) {
            return locked;
        }
        Set<Long> lockedIds = new HashSet<>();
        Set<String> sources = new LinkedHashSet<>();
        for (OutboxRecord row : locked) {
            lockedIds.add(row.id());
            sources.add(row.source());
        }
        Map<String, Long> firstGap = new HashMap<>();
        try (PreparedStatement s = c.prepareStatement("select source_key, id from " + table + " where state = 0 and id < ?"
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

    /** Locks and reads the selected pending rows of {@code scope}, in id order, passing by rows another relay holds. */
    Locked lock(Connection c, Selection selection, String scope) throws SQLException {
        StringBuilder sql = new StringBuilder(lockColumns).append(" where state = 0").append(IN_SCOPE);
        if (!selection.ids().isEmpty()) {
            sql.append(" and id in (").append("?,".repeat(selection.ids().size() - 1)).append("?)");
        } else {
            sql.append(" and created_at < ? and id > ?");
        }
        sql.append(" order by id limit ? for update skip locked");
        try (PreparedStatement s = c.prepareStatement(sql.toString())) {
            s.setString(1, scope);
            int i = 2;
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
            boolean earlierPending = false;
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    rows.add(read(r));
                    earlierPending |= r.getBoolean(13);
                }
            }
            return new Locked(rows, earlierPending);
        }
    }

    /** The oldest sent rows, by id, up to a batch: read, then deleted by id (portable, unlike {@code DELETE … LIMIT}). */
    int deleteSent(Connection c, Instant olderThan, String scope, int batchSize) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("select id from " + table + " where state = 1 and sent_at < ?"
                + IN_SCOPE + " order by id limit ?")) {
            s.setLong(1, olderThan.toEpochMilli());
            s.setString(2, scope);
            s.setInt(3, batchSize);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    ids.add(r.getLong(1));
                }
            }
        }
        if (ids.isEmpty()) {
            return 0;
        }
        try (PreparedStatement d = c.prepareStatement("delete from " + table + " where state = 1 and id in ("
                + "?,".repeat(ids.size() - 1) + "?)")) {
            for (int i = 0; i < ids.size(); i++) {
                d.setLong(i + 1, ids.get(i));
            }
            return d.executeUpdate();
        }
    }

    /** The row at the result's cursor, read with {@link #columns()}. */
    static OutboxRecord read(ResultSet r) throws SQLException {
        String messageId = r.getString(2);
        OutboxMessage message = new OutboxMessage(r.getString(4), r.getString(5), r.getBytes(10), r.getString(6), messageId,
                r.getString(7), r.getBoolean(8), OutboxHeaders.fromJson(r.getString(9)));
        return new OutboxRecord(r.getLong(1), messageId, r.getString(3), message, Instant.ofEpochMilli(r.getLong(11)),
                r.getInt(12));
    }
}
