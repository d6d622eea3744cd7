package dev.onceonly.demo.inventory;

import dev.onceonly.api.Outcome;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * Per-second history of one consumer over the last {@code seconds} seconds: how many messages got
 * each outcome, and the p50/p99 of the consumer call and of the guard's own time. Consumer threads
 * record without locking; once a second {@link #close(long)} turns what was recorded since the last
 * close into that second's entry (the page's charts), so memory stays bounded to the window
 * whatever the load.
 */
final class Timeline {

    /**
     * One second. Percentiles are in microseconds, {@code null} when nothing was measured in it.
     *
     * @param outcomes messages per outcome, indexed by {@link Outcome#ordinal()}
     */
    record Second(long epochSecond, long[] outcomes, Double callP50, Double callP99, Double guardP50, Double guardP99) {

        JsonObject toJson() {
            JsonObjectBuilder counts = JSON.createObjectBuilder();
            for (Outcome o : Outcome.values()) {
                counts.add(o.name(), outcomes[o.ordinal()]);
            }
            JsonObjectBuilder b = JSON.createObjectBuilder().add("t", epochSecond).add("outcomes", counts);
            b.add("callMicros", pair(callP50, callP99));
            b.add("guardMicros", pair(guardP50, guardP99));
            return b.build();
        }

        private static JsonArrayBuilder pair(Double p50, Double p99) {
            JsonArrayBuilder a = JSON.createArrayBuilder();
            if (p50 == null) {
                return a.addNull().addNull();
            }
            return a.add(p50).add(p99);
        }
    }

    private final int seconds;
    private final AtomicLongArray outcomes = new AtomicLongArray(Outcome.values().length);
    // Two significant digits: enough for a chart, and a few KB per recorder instead of the
    // hundreds of KB a three-digit histogram of nanoseconds grows to.
    private final Recorder callNanos = new Recorder(2);
    private final Recorder guardNanos = new Recorder(2);
    private Histogram callInterval;
    private Histogram guardInterval;
    private final Deque<Second> history = new ArrayDeque<>();

    Timeline(int seconds) {
        if (seconds < 1) {
            throw new IllegalArgumentException("seconds must be at least 1, got " + seconds);
        }
        this.seconds = seconds;
    }

    void outcome(Outcome outcome) {
        outcomes.incrementAndGet(outcome.ordinal());
    }

    void call(long nanos) {
        callNanos.recordValue(Math.max(0, nanos));
    }

    void guard(long nanos) {
        guardNanos.recordValue(Math.max(0, nanos));
    }

    /**
     * Ends the second {@code epochSecond}: everything recorded since the last close is counted in
     * it. Called by one thread at a time, once a second.
     */
    synchronized void close(long epochSecond) {
        long[] counts = new long[outcomes.length()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = outcomes.getAndSet(i, 0); // atomic: an outcome recorded meanwhile lands in the next second
        }
        // Recycling the previous interval histograms keeps a steady state without allocation.
        callInterval = callNanos.getIntervalHistogram(callInterval);
        guardInterval = guardNanos.getIntervalHistogram(guardInterval);
        history.addLast(new Second(epochSecond, counts, micros(callInterval, 50), micros(callInterval, 99),
                micros(guardInterval, 50), micros(guardInterval, 99)));
        while (history.size() > seconds) {
            history.removeFirst();
        }
    }

    /** {@return the seconds after {@code epochSecond} still in the window, oldest first} */
    synchronized List<Second> after(long epochSecond) {
        List<Second> out = new ArrayList<>();
        for (Second s : history) {
            if (s.epochSecond() > epochSecond) {
                out.add(s);
            }
        }
        return out;
    }

    private static Double micros(Histogram h, double percentile) {
        if (h.getTotalCount() == 0) {
            return null;
        }
        return Math.round(h.getValueAtPercentile(percentile) / 100.0) / 10.0;
    }
}
