package dev.onceonly.jpa;

import dev.onceonly.api.OutboxMessage;
import dev.onceonly.spi.OutboxRecord;
import dev.onceonly.spi.OutboxStore;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;
import jakarta.persistence.EntityManager;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.jdbc.ReturningWork;

import java.io.StringReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
 * waiting or publishing them too.
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
                s.setString(8, headersToJson(m.headers()));
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
    public int relay(Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish,
                     int maxAttempts, Instant now) {
        if (selection.limit() < 1) {
            return 0;
        }
        return newTransaction.call(() -> work(c -> {
            List<OutboxRecord> rows = lock(c, selection);
            if (rows.isEmpty()) {
                return 0;
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
            return rows.size();
        }));
    }

    /** Locks and reads the selected pending rows, in id order, passing by rows another relay holds. */
    private static List<OutboxRecord> lock(Connection c, Selection selection) throws SQLException {
        StringBuilder sql = new StringBuilder(COLUMNS).append(" where state = 0");
        if (!selection.ids().isEmpty()) {
            sql.append(" and id in (").append("?,".repeat(selection.ids().size() - 1)).append("?)");
        } else {
            sql.append(" and created_at < ?");
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
                r.getString(7), r.getBoolean(8), headersFromJson(r.getString(9)));
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

    /** The stored form of no headers, the usual case: written and read without JSON-P. */
    private static final String NO_HEADERS = "{}";

    /**
     * The JSON-P provider, looked up once, on the first message with headers: every {@code Json.create…}
     * call is a service-loader scan (about 85 µs for writing and reading empty headers once each,
     * measured), and an application whose messages have no headers needs no JSON-P at all.
     */
    private static final class Json {
        static final JsonProvider PROVIDER = JsonProvider.provider();
    }

    /**
     * Headers as a JSON object whose values say their type ({@code {"s": "text"}}, {@code {"i": 1}},
     * {@code {"l": 1}}, {@code {"b": true}}): amqp-client encodes an Integer and a Long differently,
     * and a consumer may tell them apart.
     */
    static String headersToJson(Map<String, Object> headers) {
        if (headers.isEmpty()) {
            return NO_HEADERS;
        }
        JsonObjectBuilder b = Json.PROVIDER.createObjectBuilder();
        headers.forEach((name, value) -> {
            JsonObjectBuilder typed = Json.PROVIDER.createObjectBuilder();
            if (value instanceof String text) {
                typed.add("s", text);
            } else if (value instanceof Integer i) {
                typed.add("i", i);
            } else if (value instanceof Long l) {
                typed.add("l", l);
            } else if (value instanceof Boolean bool) {
                typed.add("b", bool);
            } else {
                throw new IllegalArgumentException("header '" + name + "' of type " + value.getClass().getName());
            }
            b.add(name, typed);
        });
        return b.build().toString();
    }

    static Map<String, Object> headersFromJson(String json) {
        if (json == null || json.isEmpty() || json.equals(NO_HEADERS)) {
            return Map.of();
        }
        Map<String, Object> headers = new LinkedHashMap<>();
        JsonObject o;
        try (JsonReader reader = Json.PROVIDER.createReader(new StringReader(json))) {
            o = reader.readObject();
        }
        o.forEach((name, typed) -> {
            Map.Entry<String, JsonValue> e = typed.asJsonObject().entrySet().iterator().next();
            headers.put(name, switch (e.getKey()) {
                case "s" -> ((JsonString) e.getValue()).getString();
                case "i" -> ((JsonNumber) e.getValue()).intValueExact();
                case "l" -> ((JsonNumber) e.getValue()).longValueExact();
                case "b" -> e.getValue() == JsonValue.TRUE;
                default -> throw new IllegalStateException("outbox header '" + name + "' has unknown type " + e.getKey());
            });
        });
        return Collections.unmodifiableMap(headers);
    }
}
