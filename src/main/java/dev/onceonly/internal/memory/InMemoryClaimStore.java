package dev.onceonly.internal.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.onceonly.internal.support.LogId;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.HolderResult;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link ClaimStore} in the JVM's memory, for development and tests only: claims are lost on
 * restart and not shared between instances. Bounded (least-recently-used keys are evicted beyond
 * {@code maxEntries}) with per-entry expiry, both by Caffeine; its maintenance runs on the caller's
 * thread. {@code claim} is one atomic {@code compute} on the key; the holder-checked primitives read
 * the entry, check the token, and change it by compare-and-set against exactly the entry they
 * checked, so a concurrent change makes them answer {@code NOT_HOLDER}, never act on a stale read.
 *
 * <p>Fences: {@code max(last + 1, clock in microseconds)}, {@code last} being the last fence the store
 * gave to any key, so they grow per key (and across keys) whatever was released or expired.
 */
public final class InMemoryClaimStore implements ClaimStore {

    private record Entry(ClaimState state, String token, String fingerprint, long expiresAtNanos, long fence) {
    }

    private final Cache<String, Entry> cache;
    private final Clock clock;
    /** The last fence given, to any key. */
    private final AtomicLong lastFence = new AtomicLong();

    /**
     * An empty store.
     *
     * @param maxEntries the most keys kept; beyond, the least recently used are evicted
     * @param clock time source for expiry (tests pass a clock they can move)
     */
    public InMemoryClaimStore(long maxEntries, Clock clock) {
        this.clock = clock;
        this.cache = Caffeine.newBuilder()
                // Maintenance (write-buffer drain, eviction, expiry) on the calling thread, amortised
                // by Caffeine: no hand-off to ForkJoinPool.commonPool on every write (the biggest
                // cost of a claim here, see BENCHMARKS.md), and no unmanaged pool threads in an EE server.
                .executor(Runnable::run)
                .maximumSize(maxEntries)
                .ticker(this::nowNanos)
                .expireAfter(new Expiry<String, Entry>() {
                    @Override
                    public long expireAfterCreate(String key, Entry e, long currentTime) {
                        return e.expiresAtNanos - currentTime;
                    }

                    @Override
                    public long expireAfterUpdate(String key, Entry e, long currentTime, long currentDuration) {
                        return e.expiresAtNanos - currentTime;
                    }

                    @Override
                    public long expireAfterRead(String key, Entry e, long currentTime, long currentDuration) {
                        return currentDuration;
                    }
                })
                .build();
    }

    /**
     * Logs the development-only warning; call once when the store is chosen.
     *
     * @param maxEntries the most keys kept
     * @param clock time source for expiry
     * @return the store
     */
    public static InMemoryClaimStore forDevelopment(long maxEntries, Clock clock) {
        LogId.ONCE0002W.log(maxEntries);
        return new InMemoryClaimStore(maxEntries, clock);
    }

    private long nowNanos() {
        return TimeUnit.MILLISECONDS.toNanos(clock.millis());
    }

    private static Entry live(Entry e, long now) {
        // Caffeine hides expired entries from compute already; the check keeps the contract explicit.
        return e == null || e.expiresAtNanos <= now ? null : e;
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        long now = nowNanos();
        Entry[] mine = new Entry[1];
        Entry held = cache.asMap().compute(key, (k, existing) -> {
            Entry e = live(existing, now);
            if (e != null) {
                return e;
            }
            // The fence is given inside the compute, with the claim: a holder paused right after it
            // must not get a later fence than the one that took the key over from it.
            mine[0] = new Entry(ClaimState.IN_PROGRESS, token, fingerprint, now + lease.toNanos(), nextFence());
            return mine[0];
        });
        if (held == mine[0]) {
            return ClaimResult.acquired(held.fence);
        }
        return held.state == ClaimState.DONE ? ClaimResult.done(held.fingerprint) : ClaimResult.inProgress(held.fingerprint);
    }

    private long nextFence() {
        Instant now = clock.instant();
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        return lastFence.updateAndGet(last -> Math.max(last + 1, micros));
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return ifHolder(key, token, (e, now) -> new Entry(ClaimState.DONE, "", fingerprint, now + retention.toNanos(), 0));
    }

    @Override
    public HolderResult release(String key, String token) {
        return ifHolder(key, token, (e, now) -> null);
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return ifHolder(key, token, (e, now) -> new Entry(e.state, e.token, e.fingerprint, now + lease.toNanos(), e.fence));
    }

    private interface Change {
        Entry apply(Entry held, long now);
    }

    private HolderResult ifHolder(String key, String token, Change change) {
        while (true) {
            long now = nowNanos();
            Entry held = live(cache.getIfPresent(key), now);
            if (held == null || held.state != ClaimState.IN_PROGRESS || !held.token.equals(token)) {
                return HolderResult.NOT_HOLDER;
            }
            Entry next = change.apply(held, now);
            if (next == null ? cache.asMap().remove(key, held) : cache.asMap().replace(key, held, next)) {
                return HolderResult.APPLIED;
            }
            // The entry changed between the read and the swap, e.g. the lease sweep renewed this very
            // claim: read again; only a different holder or state means NOT_HOLDER.
        }
    }

    @Override
    public String name() {
        return "memory";
    }

    /** In process: always answers. */
    @Override
    public Optional<String> problem() {
        return Optional.empty();
    }

    @Override
    public void close() {
        cache.invalidateAll();
    }
}
