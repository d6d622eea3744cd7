package dev.onceonly.internal.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.onceonly.spi.ResultStore;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * {@link ResultStore} in the JVM's memory, beside the in-memory claim store: for development and
 * tests only, lost on restart and not shared between instances. Bounded like the claim store (the
 * least recently used results are evicted beyond {@code maxEntries}); a result past its retention is
 * not answered, and dropped when it is asked for.
 */
public final class InMemoryResultStore implements ResultStore {

    private record Entry(String result, long expiresAtMillis) {
    }

    private final Cache<String, Entry> cache;
    private final Clock clock;

    /**
     * An empty store.
     *
     * @param maxEntries the most results kept
     * @param clock      the time retention is measured by (tests pass one they move)
     */
    public InMemoryResultStore(long maxEntries, Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        // Maintenance on the calling thread, as in the claim store: no pool threads in an EE server.
        this.cache = Caffeine.newBuilder().executor(Runnable::run).maximumSize(maxEntries).build();
    }

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public boolean transactional() {
        return false;
    }

    @Override
    public void put(String key, String result, Duration retention) {
        cache.put(key, new Entry(Objects.requireNonNull(result, "result"), clock.millis() + retention.toMillis()));
    }

    @Override
    public Optional<String> get(String key) {
        Entry e = cache.getIfPresent(key);
        if (e == null) {
            return Optional.empty();
        }
        if (e.expiresAtMillis <= clock.millis()) {
            cache.asMap().remove(key, e);
            return Optional.empty();
        }
        return Optional.of(e.result);
    }
}
