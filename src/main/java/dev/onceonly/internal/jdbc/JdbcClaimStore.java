package dev.onceonly.internal.jdbc;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.internal.support.Databases;
import dev.onceonly.internal.support.LogId;

import dev.onceonly.internal.support.UniqueViolation;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@link ClaimStore} in a database table ({@code onceonly.database-store.table}, DDL in {@code META-INF/onceonly/ddl/}):
 * the database-only mode ({@code onceonly.store=database}), for applications with a database and no
 * Redis.
 *
 * <p>Every primitive is one auto-committed statement (a claim of a key that exists takes two, an
 * expired one three), on a connection of a <em>non-transactional</em> datasource: a claim must
 * commit at once, whatever transaction the calling thread is in, and the engine also completes and
 * releases claims from a transaction's {@code afterCompletion}, where no connection may be enlisted.
 * Atomicity per key comes from the primary key (one insert wins) and from conditional updates and
 * deletes (the database re-checks their condition on the row it locked).
 *
 * <p>Time is this application's clock, in epoch milliseconds: instances must keep their clocks
 * within a small part of the lease of each other (NTP does), and at most {@link #CLOCK_SKEW} apart.
 * Expired rows are deleted by a purge every {@code purgeInterval}, once expired for
 * {@link #CLOCK_SKEW}; until then an expired row counts as absent. A release expires the row for
 * every clock instead of deleting it: its expiry is minus the release's time.
 *
 * <p>Fences: a claim that inserts the row gets the clock in microseconds; one that takes an expired
 * or released row over gets {@code max(fence + 1, clock in microseconds)} from the row, set only if
 * the row still has the fence it read. So fences grow from the row while it exists, and from the
 * clock once the purge removed it. The purge keeps a row {@link #CLOCK_SKEW} past its expiry, which
 * is never earlier than its claim: an instance whose clock is behind by less than that reads a
 * clock above the row's fence by then, so a fence is always above every earlier claim's of its key.
 */
public final class JdbcClaimStore implements ClaimStore {

    static final int IN_PROGRESS = 0;
    static final int DONE = 1;

    /**
     * How far apart the instances' clocks may be: a row stays this long past its expiry before the
     * purge deletes it, so that a claim on a clock that far behind still takes its fence from it.
     */
    static final Duration CLOCK_SKEW = Duration.ofMinutes(1);

    /** Rounds of insert / read / take over before a claim gives up: each lost round means another caller changed the key. */
    private static final int MAX_ROUNDS = 5;

    private final DataSource dataSource;
    private final String table;
    private final String select;
    private final String takeOver;
    private final String complete;
    private final String release;
    private final String extend;
    private final Clock clock;
    private final ScheduledFuture<?> purge;
    private final ExpiredClaims expired;
    /** PostgreSQL: {@code ON CONFLICT DO NOTHING}; elsewhere the duplicate is caught (it aborts a PostgreSQL transaction, nothing else). */
    private volatile String insert;

    /**
     * @param dataSource    a non-transactional datasource ({@code transactional="false"} on Liberty) on
     *                      the database that has the table
     * @param table         the claim table ({@code onceonly.database-store.table}), already validated as
     *                      an SQL name
     * @param clock         what "now" is
     * @param scheduler     runs the purge of expired rows
     * @param purgeInterval pause between two purges
     */
    public JdbcClaimStore(DataSource dataSource, String table, Clock clock, ScheduledExecutorService scheduler,
                          Duration purgeInterval) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.table = Objects.requireNonNull(table, "table");
        this.select = "select state, fingerprint, expires_at, fence from " + table + " where claim_key = ?";
        // Conditional on the fence read too: the fence set is computed from it.
        this.takeOver = "update " + table + " set token = ?, state = 0, fingerprint = ?, expires_at = ?, fence = ?"
                + " where claim_key = ? and expires_at <= ? and fence = ?";
        this.complete = "update " + table + " set state = 1, token = '', fingerprint = ?, expires_at = ?"
                + " where claim_key = ? and token = ? and state = 0 and expires_at > ?";
        // Not a delete: the row keeps the key's last fence for the next claim until the purge. Expired at
        // once for every clock, its expiry is minus the release's time: the purge keeps it CLOCK_SKEW past that.
        this.release = "update " + table + " set token = '', expires_at = ?"
                + " where claim_key = ? and token = ? and state = 0 and expires_at > ?";
        this.extend = "update " + table + " set expires_at = ? where claim_key = ? and token = ? and state = 0 and expires_at > ?";
        this.clock = Objects.requireNonNull(clock, "clock");
        this.expired = new ExpiredClaims(this::connection, table, clock, CLOCK_SKEW);
        long ms = purgeInterval.toMillis();
        this.purge = scheduler.scheduleWithFixedDelay(this::purgeQuietly, ms, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        try (Connection c = connection()) {
            for (int round = 0; round < MAX_ROUNDS; round++) {
                Instant instant = clock.instant();
                long now = instant.toEpochMilli();
                long micros = instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000;
                if (insert(c, key, token, fingerprint, now + lease.toMillis(), micros)) {
                    return ClaimResult.acquired(micros);
                }
                long lastFence;
                try (PreparedStatement s = c.prepareStatement(select)) {
                    s.setString(1, key);
                    try (ResultSet r = s.executeQuery()) {
                        if (r.next()) {
                            if (r.getLong(3) > now) {
                                return r.getInt(1) == DONE ? ClaimResult.done(r.getString(2)) : ClaimResult.inProgress(r.getString(2));
                            }
                            lastFence = r.getLong(4);
                        } else {
                            continue; // deleted since the insert failed: insert again
                        }
                    }
                }
                // Expired: take it over, unless someone else did first (then the next round reads theirs).
                long fence = Math.max(lastFence + 1, micros);
                try (PreparedStatement s = c.prepareStatement(takeOver)) {
                    s.setString(1, token);
                    s.setString(2, fingerprint);
                    s.setLong(3, now + lease.toMillis());
                    s.setLong(4, fence);
                    s.setString(5, key);
                    s.setLong(6, now);
                    s.setLong(7, lastFence);
                    if (s.executeUpdate() == 1) {
                        return ClaimResult.acquired(fence);
                    }
                }
            }
            throw new ClaimStoreException(name(), "claim", new IllegalStateException(
                    "the key was changed by other callers " + MAX_ROUNDS + " times in a row"));
        } catch (SQLException e) {
            throw failure("claim", e);
        }
    }

    /** @return whether the row was inserted (false: the key exists) */
    private boolean insert(Connection c, String key, String token, String fingerprint, long expiresAt, long fence) throws SQLException {
        String sql = insert;
        if (sql == null) {
            boolean postgres = Databases.postgresql(c);
            sql = "insert into " + table + " (claim_key, token, state, fingerprint, expires_at, fence) values (?, ?, 0, ?, ?, ?)"
                    + (postgres ? " on conflict (claim_key) do nothing" : "");
            insert = sql;
        }
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setString(1, key);
            s.setString(2, token);
            s.setString(3, fingerprint);
            s.setLong(4, expiresAt);
            s.setLong(5, fence);
            return s.executeUpdate() == 1;
        } catch (SQLException e) {
            if (UniqueViolation.find(e).isPresent()) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return holder("complete", complete, s -> {
            long now = clock.millis();
            s.setString(1, fingerprint);
            s.setLong(2, now + retention.toMillis());
            s.setString(3, key);
            s.setString(4, token);
            s.setLong(5, now);
        });
    }

    @Override
    public HolderResult release(String key, String token) {
        return holder("release", release, s -> {
            long now = clock.millis();
            s.setLong(1, -now);
            s.setString(2, key);
            s.setString(3, token);
            s.setLong(4, now);
        });
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return holder("extend", extend, s -> {
            long now = clock.millis();
            s.setLong(1, now + lease.toMillis());
            s.setString(2, key);
            s.setString(3, token);
            s.setLong(4, now);
        });
    }

    private interface Binder {
        void bind(PreparedStatement s) throws SQLException;
    }

    /** One conditional statement: it changed the row only when the caller's token held the key, unexpired. */
    private HolderResult holder(String operation, String sql, Binder binder) {
        try (Connection c = connection(); PreparedStatement s = c.prepareStatement(sql)) {
            binder.bind(s);
            return s.executeUpdate() == 1 ? HolderResult.APPLIED : HolderResult.NOT_HOLDER;
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    /**
     * Deletes rows expired for {@link #CLOCK_SKEW} or longer, in batches of about {@code batchSize}.
     *
     * @param batchSize rows per statement
     * @return rows deleted
     */
    public long purgeExpired(int batchSize) {
        try {
            return expired.delete(batchSize);
        } catch (SQLException e) {
            throw failure("purge", e);
        }
    }

    private void purgeQuietly() {
        try {
            long deleted = purgeExpired(1_000);
            if (deleted > 0) {
                LogId.ONCE0009I.log(deleted);
            }
        } catch (RuntimeException e) {
            // Thrown out of a periodic task, it would cancel every later purge.
            LogId.ONCE0010W.log(e.getMessage());
        }
    }

    /**
     * A connection in auto-commit mode. Setting it fails on a connection enlisted in a transaction,
     * which a transactional datasource would hand out: the claim would then commit with the business
     * transaction, not at once.
     */
    private Connection connection() throws SQLException {
        Connection c = dataSource.getConnection();
        try {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            return c;
        } catch (SQLException e) {
            c.close();
            throw new SQLException("the claim store's datasource must be non-transactional (transactional=\"false\"): " + e.getMessage(),
                    e.getSQLState(), e);
        }
    }

    private ClaimStoreException failure(String operation, SQLException e) {
        // A driver's message quotes at most a key, which is a digest; never a body.
        return new ClaimStoreException(name(), operation, e);
    }

    @Override
    public String name() {
        return "database";
    }

    @Override
    public Optional<String> problem() {
        try (Connection c = connection(); PreparedStatement s = c.prepareStatement(select)) {
            s.setString(1, "");
            s.executeQuery().close();
            return Optional.empty();
        } catch (SQLException e) {
            return Optional.of("database not usable (" + e.getClass().getSimpleName() + ", SQLState " + e.getSQLState() + ")");
        }
    }

    @Override
    public void close() {
        purge.cancel(false);
    }
}
