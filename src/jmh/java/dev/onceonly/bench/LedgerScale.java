package dev.onceonly.bench;

import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.testing.Args;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import org.HdrHistogram.Histogram;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * How the ledger's cost grows with its size, on this machine's PostgreSQL and MariaDB (see
 * {@code bench/run-ledger-scale.sh}). For each database, the table {@code onceonly_processed_message}
 * from the shipped DDL ({@link LedgerSchema#apply}) in a scratch schema (PostgreSQL) or database
 * (MariaDB) named {@value #SCOPE}, filled step by step to each of {@code --rows}; at each size:
 * <ol>
 *   <li>the fill: rows added and rows/s, in the database itself, keys shaped like production's
 *       ({@code oo:orders:} and 22 base64url characters of a random-looking 128-bit value, so the
 *       primary key grows at random places as in production) and times in insertion order, as
 *       production appends them (the largest size spans 7 days);</li>
 *   <li>the size of the table and of each index, and bytes per row;</li>
 *   <li>the latency of the production insert ({@code JpaLedger}'s statement) as one transaction
 *       per message on one connection: insert + commit, and the insert alone, after a warm-up;</li>
 *   <li>the purge of the oldest {@code --purge-percent} of the rows with the production batching
 *       ({@code JpaLedger.purge}) on a second connection, while the first keeps inserting: rows/s
 *       of the purge, and the insert + commit latency during it beside the one before.</li>
 * </ol>
 * Prints a Markdown row per database and size and writes each as JSON to
 * {@code target/bench/ledger-scale-<database>-<rows>.json}.
 *
 * <p>Options: {@code --db postgresql|mariadb|both} (both), {@code --rows 1000000,10000000},
 * {@code --inserts 20000}, {@code --warmup 2000}, {@code --purge-percent 10}, {@code --purge-batch 1000}
 * (the library's default {@code onceonly.ledger.purge-batch-size}), {@code --keep} (leave the scratch
 * schema or database in place; by default it is dropped at the end, and always before a run).
 */
public final class LedgerScale {

    /** The scratch schema (PostgreSQL) or database (MariaDB); dropped before each run. */
    static final String SCOPE = "onceonly_scale";
    private static final String TABLE = "onceonly_processed_message";
    /** {@code JpaLedger.INSERT}, the production statement. */
    private static final String INSERT =
            "insert into onceonly_processed_message (msg_id, consumer, body_sha256, processed_at) values (?, ?, ?, ?)";
    private static final String CONSUMER = GuardFixture.CONSUMER;
    /** The table at the largest {@code --rows} holds this much time of messages (the rows' spacing follows from it). */
    private static final Duration FILL_SPAN = Duration.ofDays(7);
    /** Rows per fill statement: one transaction each, so that no undo log or WAL segment grows without bound. */
    private static final long FILL_CHUNK = 1_000_000;
    private static final Path OUT = Path.of("target", "bench");
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    /** The two databases: where they are, and what differs in their SQL. */
    enum Database {
        POSTGRESQL("PostgreSQL", "org.postgresql.Driver", "jdbc:postgresql://127.0.0.1:5432/test", "postgres",
                OffsetDateTime.class) {
            @Override
            String scratchUrl() {
                return admin + "?currentSchema=" + SCOPE + "&ApplicationName=" + SCOPE;
            }

            @Override
            List<String> create() {
                return List.of("drop schema if exists " + SCOPE + " cascade", "create schema " + SCOPE);
            }

            @Override
            String drop() {
                return "drop schema if exists " + SCOPE + " cascade";
            }

            @Override
            Object time(Instant instant) {
                return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC); // the column is TIMESTAMP WITH TIME ZONE
            }

            @Override
            String fill(String seed, long from, long to, long stepMicros) {
                // base64 of the 16 bytes of an md5 is 22 characters and "==": the first 22 are the
                // unpadded base64url of a random-looking 128-bit value, as KeyDeriver's digest.
                return "insert into " + TABLE + " (msg_id, consumer, body_sha256, processed_at)"
                        + " select 'oo:" + CONSUMER + ":' || translate(left(encode(decode(md5('" + seed + "' || i), 'hex'),"
                        + " 'base64'), 22), '+/', '-_'), '" + CONSUMER + "', md5('" + seed + "b' || i) || md5('" + seed
                        + "c' || i), cast(? as timestamptz) + (i - " + from + ") * interval '" + stepMicros + " microseconds'"
                        + " from generate_series(" + from + "::bigint, " + to + "::bigint) i";
            }

            @Override
            List<String> analyze() {
                // VACUUM too: autovacuum would otherwise start on the freshly filled table in the
                // middle of the measurement (the insert threshold), and set hint bits and the
                // visibility map then; production's table is vacuumed by autovacuum all along.
                return List.of("vacuum (analyze) " + TABLE);
            }

            @Override
            Sizes sizes(Connection c, long rows) throws SQLException {
                long table = single(c, "select pg_relation_size('" + TABLE + "')");
                long total = single(c, "select pg_total_relation_size('" + TABLE + "')");
                Map<String, Long> indexes = namedSizes(c, "select ci.relname, pg_relation_size(ci.oid) from pg_index i"
                        + " join pg_class ci on ci.oid = i.indexrelid where i.indrelid = '" + TABLE + "'::regclass"
                        + " order by ci.relname");
                return new Sizes(table, indexes, total, rows);
            }

            @Override
            List<Map.Entry<String, String>> settingQueries() {
                return List.of(Map.entry("version", "show server_version"),
                        Map.entry("shared_buffers", "show shared_buffers"),
                        Map.entry("synchronous_commit", "show synchronous_commit"),
                        Map.entry("fsync", "show fsync"),
                        Map.entry("isolation", "show transaction_isolation"));
            }
        },
        MARIADB("MariaDB", "org.mariadb.jdbc.Driver", "jdbc:mariadb://127.0.0.1:3306/test", "root", LocalDateTime.class) {
            @Override
            String scratchUrl() {
                return "jdbc:mariadb://127.0.0.1:3306/" + SCOPE;
            }

            @Override
            List<String> create() {
                return List.of("drop database if exists " + SCOPE, "create database " + SCOPE);
            }

            @Override
            String drop() {
                return "drop database if exists " + SCOPE;
            }

            @Override
            Object time(Instant instant) {
                // DATETIME(6) holds no zone: Hibernate writes the instant's UTC wall time into it.
                return LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
            }

            @Override
            String fill(String seed, long from, long to, long stepMicros) {
                // The SEQUENCE engine's virtual table seq_<from>_to_<to>; keys as on PostgreSQL.
                return "insert into " + TABLE + " (msg_id, consumer, body_sha256, processed_at)"
                        + " select concat('oo:" + CONSUMER + ":', replace(replace(left(to_base64(unhex(md5(concat('"
                        + seed + "', seq)))), 22), '+', '-'), '/', '_')), '" + CONSUMER + "',"
                        + " concat(md5(concat('" + seed + "b', seq)), md5(concat('" + seed + "c', seq))),"
                        + " cast(? as datetime(6)) + interval ((seq - " + from + ") * " + stepMicros + ") microsecond"
                        + " from seq_" + from + "_to_" + to;
            }

            @Override
            List<String> analyze() {
                return List.of("analyze table " + TABLE);
            }

            @Override
            Sizes sizes(Connection c, long rows) throws SQLException {
                // InnoDB keeps the rows in the primary key's B-tree: DATA_LENGTH is that index, the
                // table; the secondary indexes' sizes come from the persistent statistics ANALYZE wrote.
                long table = single(c, "select data_length from information_schema.tables where table_schema = '" + SCOPE
                        + "' and table_name = '" + TABLE + "'");
                long total = single(c, "select data_length + index_length from information_schema.tables"
                        + " where table_schema = '" + SCOPE + "' and table_name = '" + TABLE + "'");
                Map<String, Long> indexes = namedSizes(c, "select index_name, stat_value * @@innodb_page_size from mysql.innodb_index_stats"
                        + " where database_name = '" + SCOPE + "' and table_name = '" + TABLE + "' and stat_name = 'size'"
                        + " and index_name <> 'PRIMARY' order by index_name");
                if (indexes.isEmpty()) {
                    throw new IllegalStateException("mysql.innodb_index_stats has no size for " + SCOPE + "." + TABLE
                            + ": is innodb_stats_persistent off?");
                }
                return new Sizes(table, indexes, total, rows);
            }

            @Override
            List<Map.Entry<String, String>> settingQueries() {
                return List.of(Map.entry("version", "select version()"),
                        Map.entry("innodb_buffer_pool_size", "select @@innodb_buffer_pool_size"),
                        Map.entry("innodb_flush_log_at_trx_commit", "select @@innodb_flush_log_at_trx_commit"),
                        Map.entry("innodb_flush_method", "select @@innodb_flush_method"),
                        Map.entry("isolation", "select @@tx_isolation"));
            }

            @Override
            void check(Connection admin) {
                try {
                    single(admin, "select count(*) from seq_1_to_3");
                } catch (SQLException e) {
                    throw new IllegalStateException("MariaDB's SEQUENCE engine (seq_1_to_3) is not available; the fill needs it: "
                            + e.getMessage(), e);
                }
            }
        };

        final String label;
        final String driver;
        final String admin;
        final String user;
        final Class<?> timeType;

        Database(String label, String driver, String admin, String user, Class<?> timeType) {
            this.label = label;
            this.driver = driver;
            this.admin = admin;
            this.user = user;
            this.timeType = timeType;
        }

        abstract String scratchUrl();

        abstract List<String> create();

        abstract String drop();

        /** {@code instant} as the JDBC value the column is bound with. */
        abstract Object time(Instant instant);

        /** Inserts rows {@code from..to}; one parameter, the first row's time; each next row {@code stepMicros} later. */
        abstract String fill(String seed, long from, long to, long stepMicros);

        abstract List<String> analyze();

        abstract Sizes sizes(Connection c, long rows) throws SQLException;

        /** The server settings that bear on the figures, each with the query that reads it, in report order. */
        abstract List<Map.Entry<String, String>> settingQueries();

        Map<String, String> settings(Connection c) throws SQLException {
            Map<String, String> m = new LinkedHashMap<>();
            for (Map.Entry<String, String> q : settingQueries()) {
                m.put(q.getKey(), text(c, q.getValue()));
            }
            return m;
        }

        /** Fails naming what this database lacks for the tool. */
        void check(Connection admin) {
        }

        String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        Connection connectAdmin() {
            try {
                Class.forName(driver);
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("the " + label + " JDBC driver " + driver + " is not on the class path"
                        + " (run through bench/run-ledger-scale.sh, which builds with -Pbench and uses target/jmh.classpath)", e);
            }
            try {
                return DriverManager.getConnection(admin, user, "");
            } catch (SQLException e) {
                throw new IllegalStateException(label + " does not answer at " + admin + " as " + user + ": " + e.getMessage(), e);
            }
        }

        Connection connect() throws SQLException {
            return DriverManager.getConnection(scratchUrl(), user, "");
        }

        DataSource dataSource() throws SQLException {
            if (this == POSTGRESQL) {
                PGSimpleDataSource ds = new PGSimpleDataSource();
                ds.setURL(scratchUrl());
                ds.setUser(user);
                return ds;
            }
            MariaDbDataSource ds = new MariaDbDataSource(scratchUrl());
            ds.setUser(user);
            ds.setPassword("");
            return ds;
        }
    }

    /** The table's size, each index's, and everything together (the table with its indexes and side forks). */
    record Sizes(long tableBytes, Map<String, Long> indexBytes, long totalBytes, long rows) {
        long indexesBytes() {
            return indexBytes.values().stream().mapToLong(Long::longValue).sum();
        }

        double bytesPerRow() {
            return (tableBytes + indexesBytes()) / (double) rows;
        }
    }

    /** Latency of one kind of call, in nanoseconds. */
    private static final class Latency {
        final Histogram histogram = new Histogram(TimeUnit.MINUTES.toNanos(10), 3);

        void record(long nanos) {
            histogram.recordValue(Math.min(nanos, histogram.getHighestTrackableValue()));
        }

        double micros(double percentile) {
            return histogram.getValueAtPercentile(percentile) / 1000.0;
        }

        String summary() {
            return String.format(Locale.ROOT, "%.0f / %.0f / %.0f / %.0f", micros(50), micros(90), micros(99), histogram.getMaxValue() / 1000.0);
        }

        JsonObject json() {
            return Json.createObjectBuilder()
                    .add("count", histogram.getTotalCount())
                    .add("p50", micros(50)).add("p90", micros(90)).add("p99", micros(99)).add("p999", micros(99.9))
                    .add("max", histogram.getMaxValue() / 1000.0)
                    .build();
        }
    }

    /** Insert + commit, and the insert alone, of one stretch of messages. */
    private record Inserts(Latency withCommit, Latency insertOnly) {
        Inserts() {
            this(new Latency(), new Latency());
        }
    }

    private record Purge(long rows, int batches, double seconds, double longestBatchMillis) {
        double rowsPerSecond() {
            return rows / seconds;
        }
    }

    private final Database db;
    private final int inserts;
    private final int warmup;
    private final double purgePercent;
    private final int purgeBatch;
    /** Makes this run's filled keys its own: a second fill step never repeats a key of the first. */
    private final String seed = HexFormat.of().formatHex(randomBytes(8));
    private long filled;
    /** Time between two filled rows: the largest size spans {@link #FILL_SPAN}. */
    private final Duration step;
    /**
     * The ledger's clock: real time shifted so that every row, filled or inserted, is newer than
     * the rows before it. Production appends rows in time order, so the {@code processed_at} index
     * grows at its right end and the purge removes its left end; a fill step spreading its rows
     * among older ones would split that index's pages and bloat it.
     */
    private Duration clockOffset;

    private LedgerScale(Database db, long largest, int inserts, int warmup, double purgePercent, int purgeBatch) {
        this.db = db;
        this.step = Duration.ofNanos(Math.max(1_000, FILL_SPAN.toNanos() / largest / 1_000 * 1_000)); // microseconds, as stored
        this.clockOffset = FILL_SPAN.negated();
        this.inserts = inserts;
        this.warmup = warmup;
        this.purgePercent = purgePercent;
        this.purgeBatch = purgeBatch;
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(Arrays.asList(args));
        boolean keep = rest.remove("--keep");
        Args opts = Args.parse(rest.toArray(String[]::new), "--db --rows --inserts --warmup --purge-percent --purge-batch --keep");
        List<Database> databases = switch (opts.get("db", "both")) {
            case "both" -> List.of(Database.POSTGRESQL, Database.MARIADB);
            case "postgresql" -> List.of(Database.POSTGRESQL);
            case "mariadb" -> List.of(Database.MARIADB);
            default -> throw new IllegalArgumentException("--db must be postgresql, mariadb or both, got " + opts.get("db"));
        };
        long[] rows = Arrays.stream(opts.get("rows", "1000000,10000000").split(","))
                .mapToLong(s -> Long.parseLong(s.strip().replace("_", ""))).sorted().toArray();
        double purgePercent = Double.parseDouble(opts.get("purge-percent", "10"));
        if (purgePercent <= 0 || purgePercent >= 100) {
            throw new IllegalArgumentException("--purge-percent must be between 0 and 100, got " + purgePercent);
        }
        Files.createDirectories(OUT);
        List<String> table = new ArrayList<>();
        for (Database db : databases) {
            LedgerScale scale = new LedgerScale(db, rows[rows.length - 1], opts.integer("inserts", 20_000), opts.integer("warmup", 2_000), purgePercent,
                    opts.integer("purge-batch", 1_000));
            table.addAll(scale.run(rows, keep));
        }
        System.out.printf("%n## Ledger at scale%n%n%s%n", header());
        table.forEach(System.out::println);
        System.out.println("\nMariaDB (InnoDB) keeps the rows in the primary key's B-tree: its table size is that index,"
                + " and its indexes column shows the secondary index only.");
    }

    private List<String> run(long[] targets, boolean keep) throws Exception {
        List<String> lines = new ArrayList<>();
        Map<String, String> settings;
        try (Connection admin = db.connectAdmin(); Statement s = admin.createStatement()) {
            db.check(admin);
            settings = db.settings(admin);
            for (String sql : db.create()) {
                s.execute(sql);
            }
        }
        System.out.printf("%n# %s %s%n", db.label, settings);
        try {
            LedgerSchema.apply(db.dataSource(), LedgerSchema.Part.LEDGER, TABLE);
            for (long target : targets) {
                lines.add(measure(target, settings));
            }
        } finally {
            if (keep) {
                System.out.printf("kept %s %s (--keep)%n", db.label, SCOPE);
            } else {
                try (Connection admin = db.connectAdmin(); Statement s = admin.createStatement()) {
                    s.execute(db.drop());
                }
            }
        }
        return lines;
    }

    private String measure(long target, Map<String, String> settings) throws Exception {
        try (Connection c = db.connect()) {
            long added = Math.max(0, target - count(c));
            long start = System.nanoTime();
            fill(c, added);
            double fillSeconds = seconds(start);
            start = System.nanoTime();
            try (Statement s = c.createStatement()) {
                for (String sql : db.analyze()) {
                    s.execute(sql);
                }
            }
            double analyzeSeconds = seconds(start);
            long rows = count(c);
            System.out.printf(Locale.ROOT, "%s %,d rows: filled %,d in %.1f s (%,.0f rows/s), analyzed in %.1f s%n",
                    db.label, rows, added, fillSeconds, added / fillSeconds, analyzeSeconds);
            Sizes sizes = db.sizes(c, rows);
            System.out.printf(Locale.ROOT, "  table %s, indexes %s, %.0f bytes/row%n", mib(sizes.tableBytes()), indexes(sizes),
                    sizes.bytesPerRow());

            c.setAutoCommit(false);
            insert(c, warmup, new Inserts());
            Inserts baseline = new Inserts();
            insert(c, inserts, baseline);
            System.out.printf("  insert+commit p50/p90/p99/max %s us; insert alone %s us%n", baseline.withCommit().summary(),
                    baseline.insertOnly().summary());

            Object cutoff = cutoff(c, rows);
            Inserts during = new Inserts();
            CompletableFuture<Purge> purge = CompletableFuture.supplyAsync(() -> purge(cutoff));
            int insertsDuring = 0;
            while (!purge.isDone()) {
                insert(c, 1, during);
                insertsDuring++;
            }
            Purge p = purge.join();
            c.setAutoCommit(true);
            System.out.printf(Locale.ROOT, "  purge: %,d rows in %,d batches, %.2f s, %,.0f rows/s, longest batch %.0f ms;"
                            + " %,d inserts meanwhile, insert+commit p50/p90/p99/max %s us%n",
                    p.rows(), p.batches(), p.seconds(), p.rowsPerSecond(), p.longestBatchMillis(), insertsDuring,
                    during.withCommit().summary());

            write(settings, rows, added, fillSeconds, analyzeSeconds, sizes, baseline, p, during);
            return String.format(Locale.ROOT, "| %s | %,d | %,.0f | %s | %s | %.0f | %s | %.0f / %.0f | %,d, %.2f s, %,.0f/s | %.0f / %.0f |",
                    db.label, rows, added / fillSeconds, mib(sizes.tableBytes()), indexes(sizes), sizes.bytesPerRow(),
                    baseline.withCommit().summary(), baseline.insertOnly().micros(50), baseline.insertOnly().micros(99),
                    p.rows(), p.seconds(), p.rowsPerSecond(), during.withCommit().micros(50), during.withCommit().micros(99));
        }
    }

    private static String header() {
        return "| database | rows | fill rows/s | table MiB | indexes MiB | bytes/row | insert+commit p50 / p90 / p99 / max us"
                + " | insert alone p50 / p99 us | purge: rows, time, rows/s | insert+commit p50 / p99 us during the purge |\n"
                + "|---|---:|---:|---:|---|---:|---|---|---|---|";
    }

    /**
     * Adds {@code rows} rows in chunks, {@link #step} apart, after every row so far; then sets the
     * clock to the last of them, so that the inserts measured next follow on.
     */
    private void fill(Connection c, long rows) throws SQLException {
        if (rows == 0) {
            return;
        }
        Instant first = now().plus(step);
        long stepMicros = step.toNanos() / 1_000;
        for (long from = filled + 1, last = filled + rows; from <= last; from += FILL_CHUNK) {
            long to = Math.min(last, from + FILL_CHUNK - 1);
            try (PreparedStatement s = c.prepareStatement(db.fill(seed, from, to, stepMicros))) {
                s.setObject(1, db.time(first.plus(step.multipliedBy(from - filled - 1))));
                s.executeUpdate();
            }
        }
        Instant newest = first.plus(step.multipliedBy(rows - 1));
        clockOffset = Duration.between(Instant.now(), newest);
        filled += rows;
    }

    private Instant now() {
        return Instant.now().plus(clockOffset);
    }

    /**
     * {@code count} messages, each its own transaction: the production insert, then the commit. The
     * statement is prepared for each message as {@code JpaLedger} does (a server's statement cache,
     * or the PostgreSQL driver's own, makes that a lookup).
     */
    private void insert(Connection c, int count, Inserts into) throws SQLException {
        for (int i = 0; i < count; i++) {
            String key = "oo:" + CONSUMER + ":" + B64.encodeToString(randomBytes(16));
            String bodySha256 = HexFormat.of().formatHex(randomBytes(32));
            long start = System.nanoTime();
            try (PreparedStatement insert = c.prepareStatement(INSERT)) {
                insert.setString(1, key);
                insert.setString(2, CONSUMER);
                insert.setString(3, bodySha256);
                insert.setObject(4, db.time(now()));
                insert.executeUpdate();
            }
            long inserted = System.nanoTime();
            c.commit();
            long committed = System.nanoTime();
            into.insertOnly().record(inserted - start);
            into.withCommit().record(committed - start);
        }
    }

    /** The time below which the oldest {@code purgePercent} of the {@code rows} rows lie. */
    private Object cutoff(Connection c, long rows) throws SQLException {
        long offset = Math.round(rows * purgePercent / 100);
        try (PreparedStatement s = c.prepareStatement("select processed_at from " + TABLE + " order by processed_at limit 1 offset ?")) {
            s.setLong(1, offset);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    throw new IllegalStateException("the table has fewer than " + offset + " rows");
                }
                Object cutoff = r.getObject(1, db.timeType);
                c.commit();
                return cutoff;
            }
        }
    }

    /**
     * {@code JpaLedger.purge} in SQL on a connection of its own: each batch in its own transaction,
     * the {@code purgeBatch}-th oldest time below the cutoff, then a range delete up to it; until a
     * batch is short.
     */
    private Purge purge(Object olderThan) {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            long start = System.nanoTime();
            long total = 0;
            int batches = 0;
            long longest = 0;
            int deleted;
            do {
                long batchStart = System.nanoTime();
                deleted = deleteBatch(c, olderThan);
                c.commit();
                longest = Math.max(longest, System.nanoTime() - batchStart);
                total += deleted;
                batches++;
            } while (deleted >= purgeBatch);
            return new Purge(total, batches, seconds(start), longest / 1e6);
        } catch (SQLException e) {
            throw new IllegalStateException(db.label + ": the purge failed: " + e.getMessage(), e);
        }
    }

    /** {@code JpaLedger.deleteBatch}, with the SQL Hibernate sends for its two JPQL statements. */
    private int deleteBatch(Connection c, Object olderThan) throws SQLException {
        Object last = null;
        try (PreparedStatement s = c.prepareStatement("select processed_at from " + TABLE
                + " where processed_at < ? order by processed_at limit 1 offset ?")) {
            s.setObject(1, olderThan);
            s.setInt(2, purgeBatch - 1);
            try (ResultSet r = s.executeQuery()) {
                if (r.next()) {
                    last = r.getObject(1, db.timeType);
                }
            }
        }
        String delete = last == null ? "delete from " + TABLE + " where processed_at < ?" : "delete from " + TABLE + " where processed_at <= ?";
        try (PreparedStatement s = c.prepareStatement(delete)) {
            s.setObject(1, last == null ? olderThan : last);
            return s.executeUpdate();
        }
    }

    private void write(Map<String, String> settings, long rows, long added, double fillSeconds, double analyzeSeconds, Sizes sizes,
                       Inserts before, Purge purge, Inserts during) throws Exception {
        JsonObjectBuilder server = Json.createObjectBuilder();
        settings.forEach(server::add);
        JsonObjectBuilder indexes = Json.createObjectBuilder();
        sizes.indexBytes().forEach(indexes::add);
        JsonObject result = Json.createObjectBuilder()
                .add("database", db.id())
                .add("server", server)
                .add("rows", rows)
                .add("fill", Json.createObjectBuilder().add("rowsAdded", added).add("seconds", fillSeconds)
                        .add("rowsPerSecond", added / fillSeconds).add("analyzeSeconds", analyzeSeconds))
                .add("sizes", Json.createObjectBuilder().add("tableBytes", sizes.tableBytes()).add("indexBytes", indexes)
                        .add("totalBytes", sizes.totalBytes()).add("bytesPerRow", sizes.bytesPerRow()))
                .add("inserts", Json.createObjectBuilder().add("warmup", warmup)
                        .add("insertCommitMicros", before.withCommit().json()).add("insertMicros", before.insertOnly().json()))
                .add("purge", Json.createObjectBuilder().add("percent", purgePercent).add("batchSize", purgeBatch)
                        .add("rowsDeleted", purge.rows()).add("batches", purge.batches()).add("seconds", purge.seconds())
                        .add("rowsPerSecond", purge.rowsPerSecond()).add("longestBatchMillis", purge.longestBatchMillis())
                        .add("insertCommitMicrosDuring", during.withCommit().json()).add("insertMicrosDuring", during.insertOnly().json()))
                .build();
        Files.writeString(OUT.resolve("ledger-scale-" + db.id() + "-" + rows + ".json"), result + "\n");
    }

    private long count(Connection c) throws SQLException {
        return single(c, "select count(*) from " + TABLE);
    }

    private static long single(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    /** The rows of {@code sql}, a name and a size each, in the query's order. */
    private static Map<String, Long> namedSizes(Connection c, String sql) throws SQLException {
        Map<String, Long> sizes = new LinkedHashMap<>();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            while (r.next()) {
                sizes.put(r.getString(1), r.getLong(2));
            }
        }
        return sizes;
    }

    private static String text(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }

    private static String indexes(Sizes sizes) {
        StringBuilder b = new StringBuilder();
        sizes.indexBytes().forEach((name, bytes) -> b.append(b.length() == 0 ? "" : ", ")
                .append(name.replace(TABLE + "_", "")).append(' ').append(mib(bytes)));
        return b.toString();
    }

    private static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f", bytes / (1024.0 * 1024.0));
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }
}
