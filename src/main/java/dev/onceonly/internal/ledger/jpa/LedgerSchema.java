package dev.onceonly.internal.ledger.jpa;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The ledger's DDL as shipped in {@code META-INF/onceonly/ddl/<database>.sql}, and a way to apply it
 * (development, tests, the demo). The scripts are idempotent, so applying them to a database that
 * already has the table changes nothing.
 */
public final class LedgerSchema {

    private static final String LOCATION = "META-INF/onceonly/ddl/";

    private LedgerSchema() {
    }

    /**
     * Applies the script for the database behind {@code dataSource}.
     *
     * @param dataSource the ledger's datasource
     * @return the script applied, e.g. {@code META-INF/onceonly/ddl/postgresql.sql}
     * @throws SQLException          when the database refuses a statement
     * @throws IllegalStateException when no script is shipped for this database
     */
    public static String apply(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            String script = scriptFor(c.getMetaData().getDatabaseProductName());
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(true); // DDL commits implicitly on MariaDB anyway; make it so everywhere
            try (Statement s = c.createStatement()) {
                for (String statement : statements(script)) {
                    s.execute(statement);
                }
            } finally {
                c.setAutoCommit(autoCommit);
            }
            return script;
        }
    }

    /** The shipped script for a JDBC {@code DatabaseMetaData.getDatabaseProductName()}. */
    static String scriptFor(String productName) {
        String p = productName.toLowerCase(Locale.ROOT);
        if (p.contains("postgres")) {
            return LOCATION + "postgresql.sql";
        }
        if (p.contains("mariadb") || p.contains("mysql")) {
            return LOCATION + "mariadb.sql";
        }
        if (p.equals("h2")) {
            return LOCATION + "h2.sql";
        }
        throw new IllegalStateException("No ledger DDL is shipped for " + productName
                + ": create table onceonly_processed_message like " + LOCATION + "postgresql.sql");
    }

    /** The statements of a script: whole-line {@code --} comments dropped, split at semicolons. */
    static List<String> statements(String script) {
        String text;
        try (InputStream in = LedgerSchema.class.getClassLoader().getResourceAsStream(script)) {
            if (in == null) {
                throw new IllegalStateException(script + " is missing from the application");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("Cannot read " + script, e);
        }
        String code = text.lines().filter(l -> !l.strip().startsWith("--")).collect(Collectors.joining("\n"));
        return Arrays.stream(code.split(";")).map(String::strip).filter(s -> !s.isEmpty()).toList();
    }
}
