package dev.onceonly.simulation;

import dev.onceonly.internal.memory.InMemoryResultStore;
import dev.onceonly.internal.result.ResultKeeper;
import dev.onceonly.internal.result.ResultSettings;
import dev.onceonly.internal.result.ResultWrites;
import dev.onceonly.internal.support.CurrentKey;
import dev.onceonly.spi.ResultStore;
import dev.onceonly.spi.TransactionRunner;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * Stored results in the modes that keep them ({@link Mode#results()}): each run of the handler
 * returns a value of its own, which the library's {@link ResultKeeper} keeps as a consumer with
 * {@code result.keep} does — in the ledger, inside the call's transaction, or beside the claims,
 * written by {@link ResultWrites} after the commit and before the done mark. Every duplicate the
 * engine decides is answered with the stored result, which must be there and be the value of a
 * committed run of the same key: never a rolled-back run's, never another key's.
 *
 * <p>Beside the claims the results live in a store without faults of its own (the Redis-like
 * store's faults are its claims'): what is checked is what the guard writes when, not Redis.
 */
final class SimResults {

    /** Longer than any run: the simulation checks what is kept, not when it expires. */
    private static final Duration RETENTION = Duration.ofDays(1);

    private final World world;
    private final ResultStore store;
    private final ResultKeeper keeper;
    /** The values of the runs whose transactions committed. */
    private final Set<String> committed = new HashSet<>();
    private long runs;

    SimResults(World world) {
        this.world = world;
        this.store = world.mode.ledger() ? world.db.results() : new InMemoryResultStore(100_000, world.clock());
        this.keeper = new ResultKeeper("sim", String.class, new ResultSettings(ResultSettings.DEFAULT_MAX_BYTES, RETENTION), store);
    }

    /** {@return the runner guarded calls run in: writing results after the commit where the store is not the ledger} */
    TransactionRunner transactions(TransactionRunner transactions) {
        return store.transactional() ? transactions : new ResultWrites(transactions);
    }

    /**
     * The handler, returning this run's value ({@code <key>#<run>}) and keeping it.
     *
     * @param work the business method, run first
     */
    TransactionRunner.Work<Object> keeping(Runnable work) {
        return keeper.keeping(() -> {
            work.run();
            String value = CurrentKey.get() + "#" + ++runs;
            world.db.current().onCommit.add(() -> committed.add(value));
            return value;
        });
    }

    /** A duplicate of {@code key} was decided: the stored result is a committed run's of that key. */
    void duplicate(String key) {
        Object replayed = keeper.replay(key);
        if (replayed == null) {
            world.loop.trace.violation("a duplicate of " + key + " found no stored result");
        } else if (!replayed.toString().startsWith(key + "#") || !committed.contains(replayed.toString())) {
            world.loop.trace.violation("a duplicate of " + key + " got " + replayed + ", not the result of a committed run of its key");
        }
    }
}
