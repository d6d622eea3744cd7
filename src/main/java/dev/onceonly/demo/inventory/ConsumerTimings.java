package dev.onceonly.demo.inventory;

import dev.onceonly.api.GuardEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.json.JsonObject;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * Latencies of the inventory consumer since start or the last {@link #reset()}: the whole call per
 * delivery, or per batch for a batch method ({@link MeasuredInterceptor}) and the guard's own time from OnceOnly's
 * {@link GuardEvent#guardNanos()}, with the window from the first call's start to the last
 * returned call's end (messages per second = messages returned / window).
 */
@ApplicationScoped
public class ConsumerTimings {

    /** Everything one measuring window holds; {@link #reset()} swaps in a new one, so a reset never tears a window. */
    private static final class Window {
        final Histogram callNanos = new ConcurrentHistogram(3);
        final Histogram guardNanos = new ConcurrentHistogram(3);
        final LongAdder returned = new LongAdder();
        final LongAdder threw = new LongAdder();
        final AtomicLong firstStartNanos = new AtomicLong(Long.MAX_VALUE);
        final AtomicLong lastReturnNanos = new AtomicLong(Long.MIN_VALUE);
    }

    private volatile Window window = new Window();

    /** One call, which returned or threw for its {@code messages} (more than one: a batch). */
    void call(long startNanos, long endNanos, boolean returned, int messages) {
        Window w = window;
        w.callNanos.recordValue(endNanos - startNanos);
        w.firstStartNanos.accumulateAndGet(startNanos, Math::min);
        if (returned) {
            w.returned.add(messages);
            w.lastReturnNanos.accumulateAndGet(endNanos, Math::max);
        } else {
            w.threw.add(messages);
        }
    }

    void onGuardEvent(@Observes GuardEvent event) {
        if (InventoryConsumer.countsAsInventory(event.consumer())) {
            window.guardNanos.recordValue(event.guardNanos());
        }
    }

    /** Starts a new window (the load tool does so after its warm-up). */
    void reset() {
        window = new Window();
    }

    JsonObject toJson() {
        Window w = window;
        long returned = w.returned.sum();
        long windowNanos = returned == 0 ? 0 : w.lastReturnNanos.get() - w.firstStartNanos.get();
        return JSON.createObjectBuilder()
                .add("returned", returned)
                .add("threw", w.threw.sum())
                .add("windowMillis", TimeUnit.NANOSECONDS.toMillis(windowNanos))
                .add("perSecond", windowNanos == 0 ? 0 : Math.round(returned * 1e9 / windowNanos))
                .add("callMicros", percentiles(w.callNanos))
                .add("guardMicros", percentiles(w.guardNanos))
                .build();
    }

    private static JsonObject percentiles(Histogram h) {
        return JSON.createObjectBuilder()
                .add("count", h.getTotalCount())
                .add("p50", micros(h.getValueAtPercentile(50)))
                .add("p99", micros(h.getValueAtPercentile(99)))
                .add("max", micros(h.getMaxValue()))
                .build();
    }

    private static double micros(long nanos) {
        return Math.round(nanos / 100.0) / 10.0;
    }
}
