package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.internal.support.UniqueViolation;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped DDL on the real databases (this machine's PostgreSQL and MariaDB, and H2 in memory),
 * each in a scratch schema: it applies cleanly twice, Hibernate validates {@link ProcessedMessage}
 * against it, and a second row for a key is refused with an exception {@link UniqueViolation}
 * recognises.
 */
class LedgerDdlTest {

    @Test
    void postgresql() throws Exception {
        String schema = scratchName();
        String admin = "jdbc:postgresql://127.0.0.1:5432/test";
        execute(admin, "postgres", "create schema " + schema);
        try {
            check("postgresql", admin + "?currentSchema=" + schema, "postgres", schema);
        } finally {
            execute(admin, "postgres", "drop schema " + schema + " cascade");
        }
    }

    /**
     * Two applications on one PostgreSQL schema, each with its own tables: their DDL applies side by
     * side, twice (PostgreSQL names indexes and constraints per schema, so they must differ too).
     */
    @Test
    void postgresqlTwoApplicationsTablesSideBySide() throws Exception {
        String schema = scratchName();
        String admin = "jdbc:postgresql://127.0.0.1:5432/test";
        execute(admin, "postgres", "create schema " + schema);
        try {
            String url = admin + "?currentSchema=" + schema;
            for (int run = 0; run < 2; run++) {
                for (String app : List.of("app1", "app2")) {
                    for (LedgerSchema.Part part : LedgerSchema.Part.values()) {
                        String table = schema + "." + app + "_" + part.name().toLowerCase(Locale.ROOT);
                        try (Connection c = DriverManager.getConnection(url, "postgres", ""); Statement s = c.createStatement()) {
                            for (String statement : LedgerSchema.statements("META-INF/onceonly/ddl/postgresql.sql", part, table)) {
                                s.execute(statement);
                            }
                        }
                    }
                }
            }
            try (Connection c = DriverManager.getConnection(url, "postgres", ""); Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("select string_agg(tablename, ',' order by tablename) from pg_tables"
                         + " where schemaname = '" + schema + "'")) {
                r.next();
                assertEquals("app1_claims,app1_ledger,app1_outbox,app2_claims,app2_ledger,app2_outbox", r.getString(1));
            }
        } finally {
            execute(admin, "postgres", "drop schema " + schema + " cascade");
        }
    }

    @Test
    void mariadb() throws Exception {
        String database = scratchName();
        String admin = "jdbc:mariadb://127.0.0.1:3306/test";
        execute(admin, "root", "create database " + database);
        try {
            String url = "jdbc:mariadb://127.0.0.1:3306/" + database;
            check("mariadb", url, "root", null);
            // Keys differ only in case in their base64url digest: two messages, two rows.
            try (Connection c = DriverManager.getConnection(url, "root", ""); Statement s = c.createStatement()) {
                s.execute("insert into onceonly_processed_message (msg_id, consumer, body_sha256, processed_at) values ('oo:c:aB', 'c', 'h', now(6))");
                s.execute("insert into onceonly_processed_message (msg_id, consumer, body_sha256, processed_at) values ('oo:c:Ab', 'c', 'h', now(6))");
            }
        } finally {
            execute(admin, "root", "drop database " + database);
        }
    }

    @Test
    void h2() throws Exception {
        check("h2", "jdbc:h2:mem:" + scratchName() + ";DB_CLOSE_DELAY=-1", "sa", null);
    }

    private static void check(String db, String url, String user, String schema) throws Exception {
        String script = "META-INF/onceonly/ddl/" + db + ".sql";
        for (int run = 0; run < 2; run++) { // idempotent: a second application changes nothing
            try (Connection c = DriverManager.getConnection(url, user, ""); Statement s = c.createStatement()) {
                for (String statement : LedgerSchema.statements(script)) {
                    s.execute(statement);
                }
            }
        }
        Configuration cfg = new Configuration()
                .addAnnotatedClass(ProcessedMessage.class)
                .setProperty("hibernate.connection.url", url)
                .setProperty("hibernate.connection.username", user)
                .setProperty("hibernate.connection.password", "")
                .setProperty("hibernate.hbm2ddl.auto", "validate"); // fails the build when DDL and mapping differ
        if (schema != null) {
            cfg.setProperty("hibernate.default_schema", schema);
        }
        try (SessionFactory sf = cfg.buildSessionFactory()) {
            String key = "oo:c:" + UUID.randomUUID();
            sf.inTransaction(s -> s.persist(new ProcessedMessage(key, "c", "0".repeat(64), Instant.now())));
            RuntimeException duplicate = assertThrows(RuntimeException.class, () -> sf.inTransaction(s -> {
                s.persist(new ProcessedMessage(key, "c", "1".repeat(64), Instant.now()));
                s.flush();
            }));
            assertTrue(UniqueViolation.find(duplicate).isPresent(), db + ": " + UniqueViolation.describe(duplicate));
        }
    }

    private static void execute(String url, String user, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, ""); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static String scratchName() {
        return "onceonly_ddl_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12).toLowerCase(Locale.ROOT);
    }
}
