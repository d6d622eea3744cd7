package dev.onceonly.simulation;

import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.HolderResult;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * The failure semantics of the Redis deployment that the memory store lacks, over the real
 * {@link InMemoryClaimStore}: Redis replicates asynchronously, so a fail-over promotes a replica
 * that missed the writes of the last moments the old primary had acknowledged (claims, renewals,
 * done marks and releases alike are back as they were some time ago), and a restart without
 * persistence (the demo runs Redis with {@code --save ''}) starts with no key at all.
 *
 * <p>Every write the store applied is kept with its virtual time; a roll back replays the writes up
 * to its cut onto a new memory store, on a clock that reads each write's own time, so the state after
 * it is exactly the one the store had at the cut, expiries included. Single-threaded, like the loop.
 */
final class RedisLikeStore implements ClaimStore {

    /**
     * Chances per tick while faults are on.
     *
     * @param failOver   a fail-over to a replica that lost up to {@code replicaLag} of acknowledged writes
     * @param replicaLag how far behind the primary a replica may be
     * @param restart    a restart without persistence: every key gone
     */
    record Faults(double failOver, Duration replicaLag, double restart) {
    }

    static final String LOST_DONE = "the store lost a done mark (Redis failed over before replication, or restarted empty)";
    /** Not in docs/guarantees.md's list: the holder passed its check, so it commits, and a copy took the key the store no longer had. */
    static final String LOST_CONFIRMED = "the store lost a claim between its holder's pre-commit check and its done mark,"
            + " and a copy claimed the key meanwhile (Redis failed over before replication, or restarted empty)";

    private enum Op { CLAIM, COMPLETE, RELEASE, EXTEND }

    /** One write the store applied: replayed onto the state it met at its time, it applies again. */
    private record Write(long atNanos, Op op, String key, String token, String fingerprint, Duration duration) {
    }

    private static final long MAX_KEYS = 100_000;
    private static final long LIVE = Long.MIN_VALUE;

    private final SimLoop loop;
    private final Faults faults;
    private final Clock clock;
    private final List<Write> log = new ArrayList<>();
    /**
     * The last fence given. Redis's fence is its clock, which a fail-over or a restart does not roll
     * back with the data: so this is not rolled back either. {@code last + 1} stands for the time that
     * passes between two claims of a key on a real Redis (a round trip at least).
     */
    private long lastFence;
    /** What the store's clock reads during a replay: the replayed write's time ({@link #LIVE}: the loop's). */
    private long replayingAt = LIVE;
    private InMemoryClaimStore claims;
    private final BiConsumer<List<String>, String> window;
    private final Predicate<String> confirmed;
    /** Per key whose claim a roll back lost while its holder was past its pre-commit check: that holder's token. */
    private final Map<String, String> lostHolders = new HashMap<>();
    /**
     * Each token's number, in the order the store first saw it: the trace names holders by it, for
     * tokens are random and a replay of the seed must print the same events.
     */
    private final Map<String, Integer> holders = new HashMap<>();

    /**
     * @param window    told the keys a lost write opened the window docs/guarantees.md names for (without the ledger), with why
     * @param confirmed whether a claim token's holder passed its pre-commit check and has not marked its key done
     */
    RedisLikeStore(SimLoop loop, Faults faults, BiConsumer<List<String>, String> window, Predicate<String> confirmed) {
        this.loop = loop;
        this.faults = faults;
        this.window = window;
        this.confirmed = confirmed;
        this.clock = World.clock(() -> replayingAt == LIVE ? loop.now() : replayingAt);
        this.claims = new InMemoryClaimStore(MAX_KEYS, clock);
    }

    /**
     * A tick while faults are on: maybe a fail-over or a restart. The keys whose done mark is gone
     * open a window at once: a later copy runs again. A claim or renewal gone while its holder is past
     * its pre-commit check and before its done mark opens one only when another token claims the key
     * before that mark ({@link #write}); a claim lost before the check opens none: the check must
     * catch it, and one lost after it must be taken again by the mark.
     */
    void tick() {
        // Drawn every tick, so that a shrinking run that withholds one fault keeps the draws of the others.
        long lag = 1 + loop.random.nextLong(faults.replicaLag().toNanos());
        List<Write> lost;
        if (loop.trace.fault(loop.chance(faults.failOver()), "store fails over to a replica " + lag / 1_000_000 + " ms behind")) {
            lost = rollBack(loop.now() - lag);
        } else if (loop.trace.fault(loop.chance(faults.restart()), "store restarts without persistence: every key gone")) {
            lost = rollBack(Long.MIN_VALUE); // before every write
        } else {
            return;
        }
        lost.forEach(w -> loop.trace.event("  lost: " + w.op() + " " + w.key() + " by holder #" + holders.get(w.token())));
        window.accept(lost.stream().filter(w -> w.op() == Op.COMPLETE).map(Write::key).distinct().toList(), LOST_DONE);
        lost.stream().filter(w -> (w.op() == Op.CLAIM || w.op() == Op.EXTEND) && confirmed.test(w.token()))
                .forEach(w -> lostHolders.put(w.key(), w.token()));
    }

    /** The store as it was at {@code cut} (loop nanoseconds): the writes after it are gone, and returned. */
    private List<Write> rollBack(long cut) {
        List<Write> kept = new ArrayList<>();
        List<Write> lost = new ArrayList<>();
        for (Write w : log) {
            (w.atNanos() <= cut ? kept : lost).add(w);
        }
        log.clear();
        claims.close();
        claims = new InMemoryClaimStore(MAX_KEYS, clock);
        try {
            for (Write w : kept) {
                replayingAt = w.atNanos();
                if (!applied(write(w))) {
                    throw new IllegalStateException("a replayed " + w.op() + " did not apply: the roll back is not a state the store had");
                }
            }
        } finally {
            replayingAt = LIVE;
        }
        return lost;
    }

    /** Applies {@code w} to the store; kept in the log when it changed the store. */
    private Object write(Write w) {
        holders.putIfAbsent(w.token(), holders.size() + 1);
        Object result = switch (w.op()) {
            case CLAIM -> claims.claim(w.key(), w.token(), w.fingerprint(), w.duration());
            case COMPLETE -> claims.complete(w.key(), w.token(), w.fingerprint(), w.duration());
            case RELEASE -> claims.release(w.key(), w.token());
            case EXTEND -> claims.extend(w.key(), w.token(), w.duration());
        };
        if (applied(result)) {
            log.add(w);
            String lostHolder = w.op() == Op.CLAIM && replayingAt == LIVE ? lostHolders.remove(w.key()) : null;
            if (lostHolder != null && !lostHolder.equals(w.token()) && confirmed.test(lostHolder)) {
                window.accept(List.of(w.key()), LOST_CONFIRMED);
            }
        }
        return result;
    }

    private static boolean applied(Object result) {
        return result == HolderResult.APPLIED || result instanceof ClaimResult r && r.state() == ClaimState.ACQUIRED;
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        ClaimResult r = (ClaimResult) write(new Write(loop.now(), Op.CLAIM, key, token, fingerprint, lease));
        if (r.state() != ClaimState.ACQUIRED) {
            return r;
        }
        lastFence = Math.max(lastFence + 1, loop.now() / 1_000 + 1); // microseconds of the loop's clock
        return ClaimResult.acquired(lastFence);
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return (HolderResult) write(new Write(loop.now(), Op.COMPLETE, key, token, fingerprint, retention));
    }

    @Override
    public HolderResult release(String key, String token) {
        return (HolderResult) write(new Write(loop.now(), Op.RELEASE, key, token, "", Duration.ZERO));
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return (HolderResult) write(new Write(loop.now(), Op.EXTEND, key, token, "", lease));
    }

    @Override
    public String name() {
        return "redis-like";
    }

    @Override
    public Optional<String> problem() {
        return Optional.empty();
    }

    @Override
    public void close() {
        claims.close();
    }
}
