package dev.onceonly.internal.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The claim table's housekeeping: deletes rows whose expiry has passed by {@code kept} (released
 * claims, ended leases, done marks past their retention), a batch per statement, until a batch comes
 * back short. An expired row still holds its key's last fence, which the next claim grows from: kept
 * that long, it outlives the difference between two instances' clocks. A released row's expiry is
 * minus its release's time (expired for every clock): one range, {@code -t .. t}, finds both.
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
    private final long keptMillis;

    /** @param kept how long past its expiry a row stays */
    ExpiredClaims(Connections connections, String table, Clock clock, Duration kept) {
        this.connections = connections;
        this.table = table;
        this.clock = clock;
        this.keptMillis = kept.toMillis();
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
                long before = clock.millis() - keptMillis;
                List<String> keys = expired(c, before, batchSize);
                deleted = keys.isEmpty() ? 0 : delete(c, before, keys);
                total += deleted;
            } while (deleted >= batchSize);
        }
        return total;
    }

    /** @param before rows that expired (or were released) at or before this, epoch milliseconds */
    private List<String> expired(Connection c, long before, int batchSize) throws SQLException {
        List<String> keys = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("select claim_key from " + table
                + " where expires_at between ? and ?")) {
            s.setLong(1, -before);
            s.setLong(2, before);
            s.setMaxRows(batchSize);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    keys.add(r.getString(1));
                }
            }
        }
        return keys;
    }

    private int delete(Connection c, long before, List<String> keys) throws SQLException {
        try (PreparedStatement d = c.prepareStatement("delete from " + table
                + " where expires_at between ? and ? and claim_key in (" + "?,".repeat(keys.size() - 1) + "?)")) {
            d.setLong(1, -before);
            d.setLong(2, before);
            for (int i = 0; i < keys.size(); i++) {
                d.setString(i + 3, keys.get(i));
            }
            return d.executeUpdate();
        }
    }
}
