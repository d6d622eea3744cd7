package dev.onceonly.itapp;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the test consumers saw: deliveries (every call of a consumer method) and effects (the
 * business work done), per consumer and message key, and the guard's outcomes per consumer.
 */
@ApplicationScoped
public class ItRecorder {

    private final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
    private final Map<String, Map<Outcome, AtomicInteger>> outcomes = new ConcurrentHashMap<>();
    private final AtomicInteger withoutContext = new AtomicInteger();
    private final Map<String, AtomicInteger> largestBatch = new ConcurrentHashMap<>();

    /** @return how often this key was delivered to this consumer, this one included */
    public int delivered(String consumer, String key) {
        return deliveries.computeIfAbsent(consumer + "|" + key, k -> new AtomicInteger()).incrementAndGet();
    }

    public void effect(String consumer, String key) {
        effects.computeIfAbsent(consumer + "|" + key, k -> new AtomicInteger()).incrementAndGet();
    }

    /** A batch consumer was called with {@code size} messages. */
    public void batch(String consumer, int size) {
        largestBatch.computeIfAbsent(consumer, c -> new AtomicInteger()).accumulateAndGet(size, Math::max);
    }

    /** {@return the most messages a batch consumer was called with at once; 0 before its first call} */
    int largestBatch(String consumer) {
        AtomicInteger n = largestBatch.get(consumer);
        return n == null ? 0 : n.get();
    }

    /** Counts a delivery that ran without the application's naming context. */
    public void checkContext() {
        try {
            javax.naming.InitialContext.doLookup("java:comp/DefaultManagedExecutorService");
        } catch (javax.naming.NamingException e) {
            withoutContext.incrementAndGet();
        }
    }

    void onGuard(@Observes GuardEvent event) {
        outcomes.computeIfAbsent(event.consumer(), c -> new ConcurrentHashMap<>())
                .computeIfAbsent(event.outcome(), o -> new AtomicInteger()).incrementAndGet();
    }

    int deliveries(String consumer, String key) {
        AtomicInteger n = deliveries.get(consumer + "|" + key);
        return n == null ? 0 : n.get();
    }

    int effects(String consumer, String key) {
        AtomicInteger n = effects.get(consumer + "|" + key);
        return n == null ? 0 : n.get();
    }

    /** Effects of the keys that start with {@code prefix}: how many keys, how many in total, the most for one key. */
    int[] effectSummary(String consumer, String prefix) {
        int keys = 0;
        int total = 0;
        int max = 0;
        for (Map.Entry<String, AtomicInteger> e : effects.entrySet()) {
            if (e.getKey().startsWith(consumer + "|" + prefix)) {
                keys++;
                total += e.getValue().get();
                max = Math.max(max, e.getValue().get());
            }
        }
        return new int[] {keys, total, max};
    }

    int deliverySum(String consumer, String prefix) {
        return deliveries.entrySet().stream().filter(e -> e.getKey().startsWith(consumer + "|" + prefix))
                .mapToInt(e -> e.getValue().get()).sum();
    }

    Map<Outcome, AtomicInteger> outcomes(String consumer) {
        return outcomes.getOrDefault(consumer, Map.of());
    }

    int withoutContext() {
        return withoutContext.get();
    }
}
