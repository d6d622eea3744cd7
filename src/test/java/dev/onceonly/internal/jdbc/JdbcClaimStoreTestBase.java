package dev.onceonly.internal.jdbc;

import dev.onceonly.contract.ClaimStoreContract;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.ScratchDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link ClaimStore} contract on {@link JdbcClaimStore}, on a scratch database of this machine
 * (or H2 in memory), through a pool of plain connections, with a clock the test moves. One subclass
 * per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcClaimStoreTestBase extends ClaimStoreContract<JdbcClaimStore> {

    private final MutableClock clock = new MutableClock();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private ScratchDatabase db;
    private DataSource pool;

    protected abstract ScratchDatabase.Kind kind();

    @BeforeAll
    void createDatabase() throws Exception {
        db = ScratchDatabase.create(kind(), true, true);
        pool = db.pool(20);
    }

    @AfterAll
    void dropDatabase() throws Exception {
        scheduler.shutdownNow();
        if (db != null) {
            db.close();
        }
    }

    @Override
    protected JdbcClaimStore newStore() {
        return new JdbcClaimStore(pool, db.tables().claims(), clock, scheduler, Duration.ofHours(1));
    }

    @Override
    protected void elapse(Duration d) {
        clock.advance(d);
    }

    /** {@return whether the key has a row, expired or not} */
    private boolean hasRow(String key) {
        try (Connection c = pool.getConnection();
             PreparedStatement s = c.prepareStatement("select 1 from " + db.tables().claims() + " where claim_key = ?")) {
            s.setString(1, key);
            try (ResultSet r = s.executeQuery()) {
                return r.next();
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected long pttl(String key) {
        try (Connection c = pool.getConnection();
             PreparedStatement s = c.prepareStatement("select expires_at from " + db.tables().claims() + " where claim_key = ?")) {
            s.setString(1, key);
            try (ResultSet r = s.executeQuery()) {
                if (!r.next()) {
                    return -2;
                }
                long left = r.getLong(1) - clock.millis();
                return left > 0 ? left : -2;
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected String newPrefix() {
        return "oo:t" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    /** The purge deletes rows expired for longer than the clocks may differ only: an unexpired claim and a retained done key stay. */
    @Test
    void thePurgeDeletesOnlyExpiredRows() {
        String held = prefix + "held";
        String expired = prefix + "expired";
        String done = prefix + "done";
        store.claim(expired, "t1", "fp", Duration.ofMillis(100));
        store.claim(done, "t1", "fp", Duration.ofMillis(100));
        store.complete(done, "t1", "fp", Duration.ofHours(1));
        elapse(Duration.ofMillis(200));
        ((JdbcClaimStore) store).purgeExpired(1_000);
        assertTrue(hasRow(expired), "expired, kept for the clocks' difference");
        elapse(JdbcClaimStore.CLOCK_SKEW);
        store.claim(held, "t2", "fp", Duration.ofSeconds(10));
        assertTrue(((JdbcClaimStore) store).purgeExpired(1) >= 1);
        assertEquals(-2, pttl(expired));
        assertTrue(pttl(held) > 0);
        assertTrue(pttl(done) > 0);
        assertEquals(ClaimResult.done("fp"), store.claim(done, "t3", "fp", LEASE));
    }

    /**
     * A release leaves the key's row, expired, with its fence: the next claim's fence grows from it,
     * also on an instance whose clock is behind (a deleted row would leave only that clock).
     */
    @Test
    void aReleasedRowKeepsItsFenceForTheNextClaimOnAClockBehind() {
        String key = prefix + "behind";
        long first = store.claim(key, "t1", "fp", LEASE).fence();
        assertEquals(HolderResult.APPLIED, store.release(key, "t1"));
        clock.advance(Duration.ofSeconds(-5));
        try {
            assertEquals(first + 1, store.claim(key, "t2", "fp", LEASE).fence());
        } finally {
            clock.advance(Duration.ofSeconds(5));
        }
    }

    /**
     * The purge deletes a released row a moment after its release; the next claim, on an instance
     * whose clock is a few seconds behind (within what the store allows), must still get a fence above
     * the released claim's: a holder that outlived its claim must never win against a newer one.
     */
    @Test
    void aFenceIsAboveEveryEarlierClaimsAfterThePurgeOnAClockBehind() {
        String key = prefix + "purged";
        long first = store.claim(key, "t1", "fp", LEASE).fence();
        assertEquals(HolderResult.APPLIED, store.release(key, "t1"));
        clock.advance(Duration.ofMillis(1));
        ((JdbcClaimStore) store).purgeExpired(1_000);
        clock.advance(Duration.ofSeconds(-5));
        try {
            long next = store.claim(key, "t2", "fp", LEASE).fence();
            assertTrue(next > first, "fence " + next + " after " + first + ": went back once the purge deleted the row");
            assertEquals(HolderResult.APPLIED, store.release(key, "t2"));
        } finally {
            clock.advance(Duration.ofSeconds(5));
        }
        // Deleted once released for longer than the clocks may differ: a clock behind by less reads more.
        clock.advance(JdbcClaimStore.CLOCK_SKEW.plusMillis(1));
        assertTrue(((JdbcClaimStore) store).purgeExpired(1_000) >= 1);
        assertFalse(hasRow(key), "purged");
        clock.advance(Duration.ofSeconds(-5));
        try {
            long after = store.claim(key, "t3", "fp", LEASE).fence();
            assertTrue(after > first + 1, "fence " + after + " after the row was purged");
        } finally {
            clock.advance(Duration.ofSeconds(5));
        }
    }

    /** A datasource that cannot answer makes every primitive throw, never guess; readiness says why. */
    @Test
    void anUnreachableDatabaseThrowsAndReadinessSaysSo() {
        DataSource down = (DataSource) java.lang.reflect.Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (p, m, a) -> {
                    throw new SQLException("connection refused", "08001");
                });
        JdbcClaimStore unreachable = new JdbcClaimStore(down, db.tables().claims(), clock, scheduler, Duration.ofHours(1));
        assertThrows(ClaimStoreException.class, () -> unreachable.claim(prefix + "x", "t", "fp", LEASE));
        assertThrows(ClaimStoreException.class, () -> unreachable.complete(prefix + "x", "t", "fp", RETENTION));
        assertTrue(unreachable.problem().orElseThrow().contains("08001"), unreachable.problem().toString());
        assertEquals(HolderResult.NOT_HOLDER, store.release(prefix + "never", "t"));
        unreachable.close();
    }
}
