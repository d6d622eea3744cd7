package dev.onceonly.testing;

import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.ledger.jpa.LedgerSessions;
import dev.onceonly.internal.ledger.jpa.ProcessedMessage;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.UUID;

/**
 * A database of its own for one test class, on this machine's PostgreSQL (a scratch schema of
 * database {@code test}) or MariaDB (a scratch database), or H2 in memory; dropped by
 * {@link #close}. With the ledger's shipped DDL applied (or not), and Hibernate bootstrapped on it
 * outside any server, mapping {@link ProcessedMessage} and nothing else.
 */
public final class ScratchDatabase implements AutoCloseable {

    public enum Kind { H2, POSTGRESQL, MARIADB }

    /**
     * The names of the library's tables in a scratch database.
     *
     * @param ledger {@code onceonly.ledger.table}
     * @param outbox {@code onceonly.outbox.table}
     * @param claims {@code onceonly.database-store.table}
     */
    public record Tables(String ledger, String outbox, String claims) {
        /** The shipped names. */
        public static final Tables DEFAULT = new Tables(LedgerSchema.Part.LEDGER.shipped(), LedgerSchema.Part.OUTBOX.shipped(),
                LedgerSchema.Part.CLAIMS.shipped());

        /** Names of an application that shares its database, qualified by {@code schema} when not null. */
        static Tables renamed(String schema) {
            String q = schema == null ? "" : schema + ".";
            return new Tables(q + "app1_processed", q + "app1_outbox", q + "app1_claim");
        }

        /** {@return the table of {@code part}} */
        public String of(LedgerSchema.Part part) {
            return switch (part) {
                case LEDGER -> ledger;
                case OUTBOX -> outbox;
                case CLAIMS -> claims;
            };
        }
    }

    private static final String POSTGRESQL_ADMIN = "jdbc:postgresql://127.0.0.1:5432/test";
    private static final String MARIADB_ADMIN = "jdbc:mariadb://127.0.0.1:3306/test";

    private final Kind kind;
    private final String name;
    private final String url;
    private final String user;
    private final Tables tables;
    private final SessionFactory sessionFactory;

    private ScratchDatabase(Kind kind, String name, String url, String user, boolean withTable, boolean renamed)
            throws SQLException {
        this.kind = kind;
        this.name = name;
        this.url = url;
        this.user = user;
        this.tables = renamed ? Tables.renamed(kind == Kind.POSTGRESQL ? name : null) : Tables.DEFAULT;
        if (withTable) {
            applyDdl(LedgerSchema.Part.values());
        }
        Configuration cfg = new Configuration()
                .addAnnotatedClass(ProcessedMessage.class)
                .setPhysicalNamingStrategy(LedgerSessions.naming(tables.ledger()))
                .setProperty("hibernate.connection.url", url)
                .setProperty("hibernate.connection.username", user)
                .setProperty("hibernate.connection.password", "")
                .setProperty("hibernate.connection.pool_size", "20");
        // Validated where Hibernate can look the table up by its name (not a qualified one written as one name).
        if (withTable && !renamed) {
            cfg.setProperty("hibernate.hbm2ddl.auto", "validate");
            if (kind == Kind.POSTGRESQL) {
                cfg.setProperty("hibernate.default_schema", name);
            }
        }
        this.sessionFactory = cfg.buildSessionFactory();
    }

    /**
     * A new scratch database of {@code kind}, with the shipped table names.
     *
     * @param withTable whether to apply the shipped DDL
     */
    public static ScratchDatabase create(Kind kind, boolean withTable) throws SQLException {
        return create(kind, withTable, false);
    }

    /**
     * A new scratch database of {@code kind}.
     *
     * @param withTable whether to apply the shipped DDL
     * @param renamed   whether the tables have other names than the shipped ones ({@link #tables}), as
     *                  for an application that shares its database: on PostgreSQL qualified by the
     *                  scratch schema, elsewhere plain
     */
    public static ScratchDatabase create(Kind kind, boolean withTable, boolean renamed) throws SQLException {
        String name = "onceonly_t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12).toLowerCase(Locale.ROOT);
        return switch (kind) {
            // A lock wait longer than any test waits: a blocked insert ends when the test ends the
            // blocking transaction (H2's default of one second would end it with a timeout first).
            case H2 -> new ScratchDatabase(kind, name, "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=120000", "sa", withTable, renamed);
            case POSTGRESQL -> {
                execute(POSTGRESQL_ADMIN, "postgres", "create schema " + name);
                // The application name tells this database's sessions from other builds' in pg_stat_activity.
                yield new ScratchDatabase(kind, name, POSTGRESQL_ADMIN + "?currentSchema=" + name + "&ApplicationName=" + name,
                        "postgres", withTable, renamed);
            }
            case MARIADB -> {
                execute(MARIADB_ADMIN, "root", "create database " + name);
                yield new ScratchDatabase(kind, name, "jdbc:mariadb://127.0.0.1:3306/" + name, "root", withTable, renamed);
            }
        };
    }

    public Kind kind() {
        return kind;
    }

    /** The names of the library's tables here. */
    public Tables tables() {
        return tables;
    }

    /** Applies the shipped DDL of {@code parts} with this database's table names. */
    public void applyDdl(LedgerSchema.Part... parts) throws SQLException {
        for (LedgerSchema.Part part : parts) {
            LedgerSchema.apply(dataSource(), part, tables.of(part));
        }
    }

    /** The schema (PostgreSQL) or database (MariaDB, H2) this scratch database is. */
    public String name() {
        return name;
    }

    /** Hibernate on this database; also the JPA {@code EntityManagerFactory}. */
    public SessionFactory sessionFactory() {
        return sessionFactory;
    }

    /** A plain JDBC connection of its own (auto-commit), outside Hibernate. */
    public Connection connect() throws SQLException {
        return DriverManager.getConnection(url, user, "");
    }

    /** A {@link DataSource} of plain connections to this database. */
    public DataSource dataSource() {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (p, method, args) -> switch (method.getName()) {
                    case "getConnection" -> connect();
                    case "toString" -> url;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /**
     * A pool of up to {@code max} plain (auto-commit, non-transactional) connections to this
     * database, closed with it: for stores that run thousands of statements.
     */
    public DataSource pool(int max) throws SQLException {
        javax.sql.ConnectionPoolDataSource source = switch (kind) {
            case H2 -> {
                org.h2.jdbcx.JdbcDataSource h2 = new org.h2.jdbcx.JdbcDataSource();
                h2.setURL(url);
                h2.setUser(user);
                yield h2;
            }
            case POSTGRESQL -> {
                @SuppressWarnings("deprecation")
                org.postgresql.ds.PGConnectionPoolDataSource pg = new org.postgresql.ds.PGConnectionPoolDataSource();
                pg.setURL(url);
                pg.setUser(user);
                yield pg;
            }
            case MARIADB -> {
                org.mariadb.jdbc.MariaDbDataSource maria = new org.mariadb.jdbc.MariaDbDataSource(url);
                maria.setUser(user);
                maria.setPassword("");
                yield maria;
            }
        };
        org.h2.jdbcx.JdbcConnectionPool pool = org.h2.jdbcx.JdbcConnectionPool.create(source);
        pool.setMaxConnections(max);
        pools.add(pool);
        return pool;
    }

    private final java.util.List<org.h2.jdbcx.JdbcConnectionPool> pools = new java.util.ArrayList<>();

    /**
     * How many sessions of this database wait for a lock right now, as the database reports it.
     * H2 does not report its row-lock waits ({@code blocker_id} stays null), so there this counts
     * the other sessions executing a statement on the ledger table at this moment; in these tests
     * such a statement only lasts while it waits. InnoDB refreshes {@code information_schema.innodb_trx}
     * only when it was not read for 100 ms (read more often, it never changes), so on MariaDB each
     * call first lets 150 ms pass.
     */
    public int lockWaiters() throws SQLException, InterruptedException {
        if (kind == Kind.MARIADB) {
            Thread.sleep(150);
        }
        String sql = switch (kind) {
            case H2 -> "select count(*) from information_schema.sessions where session_id <> session_id()"
                    + " and lower(executing_statement) like '%" + tables.ledger().substring(tables.ledger().indexOf('.') + 1)
                    + "%' and ? is not null";
            case POSTGRESQL -> "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and application_name = ?";
            case MARIADB -> "select count(*) from information_schema.innodb_trx t join information_schema.processlist p"
                    + " on p.id = t.trx_mysql_thread_id where t.trx_state = 'LOCK WAIT' and p.db = ?";
        };
        try (Connection c = connect(); PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }

    @Override
    public void close() throws SQLException {
        pools.forEach(org.h2.jdbcx.JdbcConnectionPool::dispose);
        sessionFactory.close();
        switch (kind) {
            case H2 -> {
                try (Connection c = connect(); Statement s = c.createStatement()) {
                    s.execute("shutdown");
                }
            }
            case POSTGRESQL -> execute(POSTGRESQL_ADMIN, "postgres", "drop schema " + name + " cascade");
            case MARIADB -> execute(MARIADB_ADMIN, "root", "drop database " + name);
        }
    }

    private static void execute(String url, String user, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, ""); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
