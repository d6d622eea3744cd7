package dev.onceonly.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * The chaos run's view of PostgreSQL (127.0.0.1:5432, database {@code test}): a schema of the run's
 * own, emptied when the run starts, holding the demo's stock and OnceOnly's ledger, one stock row
 * per order (so each order's effect can be read on its own), and the backends of the demo
 * instances to terminate.
 */
public final class ChaosDatabase implements AutoCloseable {

    public static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final String schema;
    private final Connection connection;

    public ChaosDatabase(String schema) throws SQLException {
        if (!schema.matches("[a-z_][a-z0-9_]{0,62}")) {
            throw new IllegalArgumentException("schema name " + schema);
        }
        this.schema = schema;
        connection = DriverManager.getConnection(URL + "?ApplicationName=onceonly-chaos-driver", "postgres", "");
        connection.setAutoCommit(true);
        try (Statement st = connection.createStatement()) {
            // A run counts what happened in its schema (ledger rows by consumer, stock by SKU); what an
            // earlier run under the same name left there (a second build on one machine) must not count.
            st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            st.execute("CREATE SCHEMA " + schema);
            st.execute("SET search_path TO " + schema);
        }
    }

    /** The JDBC URL the instances use: this schema, and an application name to find their backends by. */
    public String instanceUrl(String applicationName) {
        return URL + "?currentSchema=" + schema + "&ApplicationName=" + applicationName;
    }

    /**
     * Creates the schema, the ledger table (OnceOnly's shipped DDL) and the stock table (as the demo's
     * entity maps it) before the instances start, so two instances starting at once never race to
     * create them.
     */
    public void prepare() throws SQLException, IOException {
        try (Statement st = connection.createStatement()) {
            for (String ddl : ddl().split(";")) {
                if (!ddl.isBlank()) {
                    st.execute(ddl);
                }
            }
            st.execute("CREATE TABLE IF NOT EXISTS demo_stock (sku VARCHAR(64) NOT NULL PRIMARY KEY, quantity BIGINT NOT NULL)");
        }
    }

    private static String ddl() throws IOException {
        try (InputStream in = ChaosDatabase.class.getResourceAsStream("/META-INF/onceonly/ddl/postgresql.sql")) {
            if (in == null) {
                throw new IllegalStateException("META-INF/onceonly/ddl/postgresql.sql is not on the class path");
            }
            StringBuilder sql = new StringBuilder();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.trim().startsWith("--")) {
                    sql.append(line).append('\n');
                }
            }
            return sql.toString();
        }
    }

    public void insertStock(Collection<String> skus, long quantity) throws SQLException {
        connection.setAutoCommit(false);
        try (PreparedStatement ps = connection.prepareStatement("INSERT INTO demo_stock (sku, quantity) VALUES (?, ?)")) {
            int n = 0;
            for (String sku : skus) {
                ps.setString(1, sku);
                ps.setLong(2, quantity);
                ps.addBatch();
                if (++n % 1000 == 0) {
                    ps.executeBatch();
                }
            }
            ps.executeBatch();
            connection.commit();
        } finally {
            connection.setAutoCommit(true);
        }
    }

    /** Stock rows whose SKU starts with {@code prefix} and that no longer hold {@code initial}: SKU -> quantity. */
    public Map<String, Long> changed(String prefix, long initial) throws SQLException {
        Map<String, Long> changed = new HashMap<>();
        try (PreparedStatement ps = connection.prepareStatement("SELECT sku, quantity FROM demo_stock WHERE sku LIKE ? AND quantity <> ?")) {
            ps.setString(1, prefix + "%");
            ps.setLong(2, initial);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    changed.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return changed;
    }

    /** Ledger rows whose key is one of {@code keys}. */
    public int ledgerRows(Collection<String> keys) throws SQLException {
        int rows = 0;
        try (PreparedStatement ps = connection.prepareStatement("SELECT count(*) FROM onceonly_processed_message WHERE msg_id = ANY (?)")) {
            ps.setArray(1, connection.createArrayOf("varchar", keys.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                rows = rs.getInt(1);
            }
        }
        return rows;
    }

    /** Ledger rows of {@code consumer}. */
    public int ledgerRowsOf(String consumer) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("SELECT count(*) FROM onceonly_processed_message WHERE consumer = ?")) {
            ps.setString(1, consumer);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Terminates the backends of every connection whose application name starts with {@code prefix}. */
    public int terminate(String prefix) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'test' AND application_name LIKE ?")) {
            ps.setString(1, prefix + "%");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    public void deleteStock(String prefix) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("DELETE FROM demo_stock WHERE sku LIKE ?")) {
            ps.setString(1, prefix + "%");
            ps.executeUpdate();
        }
    }

    @Override
    public void close() throws SQLException {
        connection.close();
    }
}
