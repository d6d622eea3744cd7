package dev.onceonly.simulation;

import dev.onceonly.internal.jdbc.JdbcClaimStore;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimStore;
import org.h2.jdbcx.JdbcConnectionPool;

import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * The claim store all instances of a run share, as the run's mode chooses it, on the run's virtual
 * clock: the real {@link InMemoryClaimStore}; the real {@link JdbcClaimStore} on an H2 database in
 * memory of the run's own, its purge on the loop; or a {@link RedisLikeStore}. Instances reach it
 * through {@link SimStore}, which adds the network's faults; {@link #close} drops the run's database.
 * Every claim passes a {@link FenceWatch}. The memory store and the Redis-like one let done marks ride with claims, as the memory store
 * (in process) and Redis (pipelined, without {@code WAIT}) do for users; the database store does not.
 */
final class StoreBackend implements AutoCloseable {

    /** Names each run's database apart; the name changes nothing in the run. */
    private static final AtomicLong DATABASES = new AtomicLong();
    private static final Duration PURGE_INTERVAL = Duration.ofSeconds(1);

    final ClaimStore store;
    /** The Redis-like store, for its own faults; {@code null} in the other modes. */
    private final RedisLikeStore redisLike;
    /** The database's connections, for the database store: disposing of them drops the database. */
    private final JdbcConnectionPool pool;

    private StoreBackend(ClaimStore store, RedisLikeStore redisLike, JdbcConnectionPool pool) {
        this.store = store;
        this.redisLike = redisLike;
        this.pool = pool;
    }

    /**
     * @param owner     who runs the database store's purge: an owner that never dies
     * @param instances the calling instance's wall clock: the database store's time, as each instance's store reads it
     * @param window    told the keys a fault of the store itself opened the window docs/guarantees.md names for, with why
     * @param confirmed whether a claim token's holder passed its pre-commit check and has not marked its key done
     */
    static StoreBackend open(Mode mode, SimLoop loop, SimLoop.Owner owner, Clock instances,
                             BiConsumer<List<String>, String> window, Predicate<String> confirmed) {
        Clock clock = World.clock(loop::now);
        return switch (mode.store()) {
            case MEMORY -> new StoreBackend(BatchClaimStore.inProcess(new FenceWatch(new InMemoryClaimStore(100_000, clock), loop.trace)), null, null);
            case REDIS_LIKE -> {
                RedisLikeStore redis = new RedisLikeStore(loop, mode.redisFaults(), window, confirmed);
                yield new StoreBackend(BatchClaimStore.inProcess(new FenceWatch(redis, loop.trace)), redis, null);
            }
            case DATABASE -> {
                JdbcConnectionPool pool = JdbcConnectionPool.create("jdbc:h2:mem:sim" + DATABASES.incrementAndGet(), "sa", "");
                try {
                    LedgerSchema.apply(pool, LedgerSchema.Part.CLAIMS, LedgerSchema.Part.CLAIMS.shipped());
                } catch (SQLException e) {
                    pool.dispose();
                    throw new IllegalStateException("the run's database could not be created", e);
                }
                JdbcClaimStore claims = new JdbcClaimStore(pool, LedgerSchema.Part.CLAIMS.shipped(), instances,
                        new SimExecutor(loop, owner), PURGE_INTERVAL);
                yield new StoreBackend(new FenceWatch(claims, loop.trace), null, pool);
            }
        };
    }

    /** A tick while faults are on: the faults of the store itself, beside the network's ({@link SimStore}). */
    void tick() {
        if (redisLike != null) {
            redisLike.tick();
        }
    }

    @Override
    public void close() {
        store.close();
        if (pool != null) {
            pool.dispose(); // the last connection closed: H2 drops the database in memory
        }
    }
}
