package dev.onceonly.internal.ledger.jpa;

import javax.sql.DataSource;
import dev.onceonly.internal.support.Databases;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The DDL of the ledger, the outbox and the claim table as shipped in
 * {@code META-INF/onceonly/ddl/<database>.sql}, and a way to apply one part's statements with its
 * configured table name (development, tests, the demo). The scripts are idempotent, so applying them
 * to a database that already has the table changes nothing.
 *
 * <p>The shipped scripts name the default tables; a part's statements are those that name its
 * default table, and are applied with that name replaced by the configured one, and each index or
 * constraint {@code <default table>_<suffix>} renamed {@code <table>_<suffix>} (without the table's
 * schema: an index lives in its table's schema). Users who apply the DDL by hand do the same.
 */
public final class LedgerSchema {

    private static final String LOCATION = "META-INF/onceonly/ddl/";

    /** The parts that have a table, each with the name the shipped scripts give it. */
    public enum Part {
        /** The ledger ({@code onceonly.ledger.table}). */
        LEDGER("onceonly_processed_message"),
        /** The transactional outbox ({@code onceonly.outbox.table}). */
        OUTBOX("onceonly_outbox"),
        /** The claim store of the database-only mode ({@code onceonly.database-store.table}). */
        CLAIMS("onceonly_claim");

        private final String shipped;
        /** The default name as a word: not the start of a longer name such as an index's. */
        private final Pattern table;
        /** An index or constraint named after the default name. */
        private final Pattern derived;

        Part(String shipped) {
            this.shipped = shipped;
            this.table = Pattern.compile("\\b" + shipped + "\\b");
            this.derived = Pattern.compile("\\b" + shipped + "_(\\w+)");
        }

        /** {@return the table's name in the shipped DDL, and its default} */
        public String shipped() {
            return shipped;
        }
    }

    private LedgerSchema() {
    }

    /**
     * Applies one part's statements of the script for the database behind {@code dataSource}, for
     * the table {@code table}.
     *
     * @param dataSource the part's datasource
     * @param part       whose statements
     * @param table      the part's table, as configured: {@code name} or {@code schema.name}, already
     *                   validated as an SQL name
     * @return what was applied, for the log: e.g. {@code onceonly_outbox from META-INF/onceonly/ddl/postgresql.sql}
     * @throws SQLException          when the database refuses a statement
     * @throws IllegalStateException when no script is shipped for this database
     */
    public static String apply(DataSource dataSource, Part part, String table) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            String script = scriptFor(c.getMetaData().getDatabaseProductName());
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(true); // DDL commits implicitly on MariaDB anyway; make it so everywhere
            try (Statement s = c.createStatement()) {
                for (String statement : statements(script, part, table)) {
                    s.execute(statement);
                }
            } finally {
                c.setAutoCommit(autoCommit);
            }
            return table + " from " + script;
        }
    }

    /** The statements of {@code script} that concern {@code part}, for its table {@code table}. */
    static List<String> statements(String script, Part part, String table) {
        String bare = table.substring(table.lastIndexOf('.') + 1);
        return statements(script).stream()
                .filter(s -> part.table.matcher(s).find() || part.derived.matcher(s).find())
                .map(s -> part.derived.matcher(s).replaceAll(Matcher.quoteReplacement(bare) + "_$1"))
                .map(s -> part.table.matcher(s).replaceAll(Matcher.quoteReplacement(table)))
                .toList();
    }

    /** The shipped script for a JDBC {@code DatabaseMetaData.getDatabaseProductName()}. */
    static String scriptFor(String productName) {
        String p = productName.toLowerCase(Locale.ROOT);
        if (Databases.postgresql(productName)) {
            return LOCATION + "postgresql.sql";
        }
        if (p.contains("mariadb") || p.contains("mysql")) {
            return LOCATION + "mariadb.sql";
        }
        if (p.equals("h2")) {
            return LOCATION + "h2.sql";
        }
        throw new IllegalStateException("No ledger DDL is shipped for " + productName
                + ": create the tables like " + LOCATION + "postgresql.sql");
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
