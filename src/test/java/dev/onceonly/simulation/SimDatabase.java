package dev.onceonly.simulation;

import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.ResultStore;
import dev.onceonly.spi.TransactionRunner;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The business database: transactions holding the ledger's rows and the handlers' effects, a
 * unique ledger key, commits that fail or whose outcome is unknown, and transactions rolled back
 * when their instance dies. Single-threaded like everything in the simulation, so the open
 * transactions form a stack (a nested call's transaction is the innermost); a row inserted while
 * another open transaction holds the same key uncommitted waits as PostgreSQL and MariaDB do, and
 * since that transaction belongs to a call paused further out, the wait ends in a lock timeout.
 */
final class SimDatabase {

    /** Chances per commit: it fails (rolled back), its outcome is unknown (committed, reported failed), the instance dies right after it. */
    record Faults(double commitFails, double commitInDoubt, double crashAfterCommit) {
        static final Faults NONE = new Faults(0, 0, 0);
    }

    final Map<String, String> ledgerRows = new HashMap<>();
    /** When each ledger row committed, virtual nanoseconds: what the ledger purge goes by. */
    private final Map<String, Long> ledgerWritten = new LinkedHashMap<>();
    /** Keys whose ledger row the purge deleted. */
    final Set<String> purged = new LinkedHashSet<>();
    /** Committed stored results, by key: the ledger's result columns. */
    private final Map<String, String> results = new HashMap<>();
    /** Committed effects per logical message. */
    final Map<String, Integer> effects = new LinkedHashMap<>();
    private final Deque<Tx> open = new ArrayDeque<>();
    /** Effects committed whose guard has not been told yet (its completion, which writes the done mark, runs). */
    private final Map<SimLoop.Owner, List<String>> committedUntold = new HashMap<>();
    private final SimLoop loop;
    private final Faults faults;
    /** Told each key whose effect committed although the engine was told otherwise, and why. */
    private final Windows windows;

    SimDatabase(SimLoop loop, Faults faults, Windows windows) {
        this.loop = loop;
        this.faults = faults;
        this.windows = windows;
    }

    /** Where an effect may repeat by design without a ledger: the windows docs/guarantees.md names. */
    interface Windows {
        void opened(String logicalId, String why);
    }

    final class Tx {
        final SimLoop.Owner owner;
        final Map<String, String> rows = new HashMap<>();
        /** Stored results written in this transaction, by key. */
        final Map<String, String> results = new HashMap<>();
        final List<String> effects = new ArrayList<>();
        /** Claim-store keys of the messages whose effects these are. */
        final Set<String> keys = new HashSet<>();
        /** What others keep with this transaction (a JTA registry's resources, the outbox's rows). */
        final Map<Object, Object> resources = new HashMap<>();
        /** Told, once, whether it committed, when it ends (a JTA {@code afterCompletion}). */
        final List<Consumer<Boolean>> completions = new ArrayList<>();
        /** What commits with the transaction outside the database: a JMS receipt, a JMS send. */
        final List<Runnable> onCommit = new ArrayList<>();
        boolean over;

        Tx(SimLoop.Owner owner) {
            this.owner = owner;
        }
    }

    /** {@return whether a transaction is open, and its instance alive} */
    boolean active() {
        Tx tx = open.peekFirst();
        return tx != null && !tx.over;
    }

    Tx current() {
        Tx tx = open.peekFirst();
        if (tx == null) {
            throw new IllegalStateException("no transaction");
        }
        return tx;
    }

    /** The instance died: its connections are gone and the database rolls their transactions back. */
    void crashed(SimLoop.Owner owner) {
        List<String> untold = committedUntold.remove(owner);
        if (untold != null) {
            untold.forEach(e -> windows.opened(e, "instance died between commit and done mark"));
        }
        for (Tx tx : open) {
            if (tx.owner == owner) {
                tx.over = true;
            }
        }
    }

    private void end(Tx tx, boolean commit) {
        if (!open.remove(tx)) {
            return; // ended already (an instance that died right after its commit)
        }
        boolean committed = commit && !tx.over;
        if (committed) {
            ledgerRows.putAll(tx.rows);
            tx.rows.keySet().forEach(k -> ledgerWritten.put(k, loop.now()));
            results.putAll(tx.results);
            for (String e : tx.effects) {
                effects.merge(e, 1, Integer::sum);
            }
            tx.onCommit.forEach(Runnable::run);
        }
        tx.over = true;
        tx.completions.forEach(c -> c.accept(committed));
    }

    /** The ledger on this database: the real engine's second layer, by the {@code Ledger} contract. */
    Ledger ledger(SimLoop.Owner owner) {
        return new Ledger() {
            @Override
            public LedgerDecision insert(String key, String consumer, String bodyHash) {
                Tx tx = current();
                for (Tx other : open) {
                    if (other != tx && !other.over && other.rows.containsKey(key)) {
                        loop.pause(owner, TimeUnit.MILLISECONDS.toNanos(50));
                        throw new IllegalStateException("lock wait timeout: the key's row is held by an open transaction");
                    }
                }
                String committed = ledgerRows.get(key);
                if (committed != null || tx.rows.containsKey(key)) {
                    String hash = committed != null ? committed : tx.rows.get(key);
                    return hash.isEmpty() || bodyHash.isEmpty() || hash.equals(bodyHash) ? LedgerDecision.DUPLICATE : LedgerDecision.CONFLICT;
                }
                tx.rows.put(key, bodyHash);
                return LedgerDecision.INSERTED;
            }

            @Override
            public void checkReady() {
            }

            /** The rows written before {@code olderThan} (the run's wall clock), deleted in one round trip. */
            @Override
            public long purge(Instant olderThan, int batchSize) {
                loop.roundTrip(owner, 500);
                List<String> gone = new ArrayList<>();
                ledgerWritten.forEach((key, at) -> {
                    if (World.clock(() -> at).instant().isBefore(olderThan)) {
                        gone.add(key);
                    }
                });
                gone.forEach(k -> {
                    ledgerRows.remove(k);
                    ledgerWritten.remove(k);
                    purged.add(k);
                });
                if (!gone.isEmpty()) {
                    loop.trace.event(owner + " ledger purge deleted " + gone.size() + " rows before " + olderThan);
                }
                return gone.size();
            }
        };
    }

    /** The ledger's result store on this database: a result is written in the call's transaction and commits with it. */
    ResultStore results() {
        return new ResultStore() {
            @Override
            public String name() {
                return "ledger";
            }

            @Override
            public boolean transactional() {
                return true;
            }

            @Override
            public void put(String key, String result, Duration retention) {
                current().results.put(key, result);
            }

            @Override
            public Optional<String> get(String key) {
                return Optional.ofNullable(results.get(key));
            }
        };
    }

    /**
     * Transactions of {@code owner}'s guarded calls, with the commit faults of this run; {@code store}
     * is told when the engine's pre-commit check runs, and for which keys.
     */
    TransactionRunner transactions(SimLoop.Owner owner, Runnable crash, SimStore store) {
        return new TransactionRunner() {
            @Override
            public <T> T run(Work<T> work, Completion completion) throws Exception {
                Tx tx = new Tx(owner);
                open.addFirst(tx);
                T result;
                try {
                    result = work.call();
                } catch (SimLoop.Crash c) {
                    end(tx, false);
                    throw c;
                } catch (Exception | Error e) {
                    end(tx, false);
                    completion.completed(false);
                    throw e;
                }
                try {
                    return commit(tx, result, completion, crash);
                } catch (SimLoop.Crash c) {
                    end(tx, false); // the connection died with the instance: rolled back, unless it committed already
                    throw c;
                }
            }

            private <T> T commit(Tx tx, T result, Completion completion, Runnable crash) {
                if (tx.over) {
                    // Its instance died meanwhile (a crash inside a call that did not pause since).
                    throw new SimLoop.Crash(owner);
                }
                boolean mayCommit;
                Set<String> outer = store.checking(tx.keys);
                try {
                    mayCommit = completion.mayCommit();
                } finally {
                    store.checked(outer);
                }
                if (!mayCommit) {
                    end(tx, false);
                    completion.completed(false);
                    throw new IllegalStateException("rolled back: the claim could not be confirmed before commit");
                }
                loop.roundTrip(owner, 1_000);
                Trace trace = loop.trace;
                if (trace.fault(loop.chance(faults.commitFails()), "commit of " + owner + " fails")) {
                    end(tx, false);
                    completion.completed(false);
                    throw new IllegalStateException("commit failed (simulated)");
                }
                if (trace.fault(loop.chance(faults.commitInDoubt()), "commit of " + owner + " in doubt (it committed)")) {
                    end(tx, true);
                    tx.effects.forEach(e -> windows.opened(e, "commit in doubt"));
                    completion.completed(false);
                    throw new IllegalStateException("commit outcome unknown (simulated)");
                }
                end(tx, true);
                if (trace.fault(loop.chance(faults.crashAfterCommit()), owner + " dies right after its commit")) {
                    tx.effects.forEach(e -> windows.opened(e, "instance died between commit and done mark"));
                    crash.run();
                    throw new SimLoop.Crash(owner);
                }
                List<String> untold = committedUntold.computeIfAbsent(owner, o -> new ArrayList<>());
                untold.addAll(tx.effects);
                completion.completed(true); // a crash inside leaves them untold (see crashed)
                tx.effects.forEach(untold::remove);
                return result;
            }
        };
    }
}
