package dev.onceonly.internal.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * The claim table's housekeeping: deletes rows whose expiry has passed (released claims, ended
 * leases, done marks past their retention), a batch per statement, until a batch comes back short.
 * Selected first and deleted by key with the expiry checked again, portably (no {@code DELETE …
 * LIMIT}), so a key claimed again between the two statements is not touched.
 */
final class ExpiredClaims {

    /** Where connections come from: the claim store's, auto-committed. */
    interface Connections {
        Connection open() throws SQLException;
    }

    private final Connections connections;
    private final String table;
    private final Clock clock;

    ExpiredClaims(Connections connections, String table, Clock clock) {
        this.connections = connections;
        this.table = table;
        this.clock = clock;
    }

    /**
     * @param batchSize rows per statement
     * @return rows deleted
     */
    long delete(int batchSize) throws SQLException {
        long total = 0;
        try (Connection c = connections.open()) {
            int deleted;
            do {
                long now = clock.millis();
                List<String> keys = expired(c, now, batchSize);
                deleted = keys.isEmpty() ? 0 : delete(c, now, keys);
                total += deleted;
            } while (deleted >= batchSize);
        }
        return total;
    }

    private List<String> expired(Connection c, long now, int batchSize) throws SQLException {
        List<String> keys = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("select claim_key from " + table + " where expires_at <= ?")) {
            s.setLong(1, now);
            s.setMaxRows(batchSize);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    keys.add(r.getString(1));
                }
            }
        }
        return keys;
    }

    private int delete(Connection c, long now, List<String> keys) throws SQLException {
        try (PreparedStatement d = c.prepareStatement("delete from " + table + " where expires_at <= ? and claim_key in ("
                + "?,".repeat(keys.size() - 1) + "?)")) {
            d.setLong(1, now);
            for (int i = 0; i < keys.size(); i++) {
                d.setString(i + 2, keys.get(i));
            }
            return d.executeUpdate();
        }
    }
}
