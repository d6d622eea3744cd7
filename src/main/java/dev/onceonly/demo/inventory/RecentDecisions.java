package dev.onceonly.demo.inventory;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;

import java.util.ArrayList;
import java.util.List;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * The last {@code capacity} decisions of the guard, numbered in the order they were made, for the
 * page's decision stream. Bounded whatever the load: an older decision is overwritten by a newer
 * one. Thread-safe; consumer threads add while the stream reads.
 */
final class RecentDecisions {

    /**
     * One decision as the page shows it: the key only as the guard's digest, never the key or body.
     *
     * @param seq         1 for the first decision recorded, then one more for each
     * @param epochMillis when it was recorded
     * @param attempt     the delivery's attempt number, or 0 when the call carried no broker metadata
     */
    record Decision(long seq, long epochMillis, String consumer, Outcome outcome, Layer layer, String keyDigest,
                    String reason, int attempt) {

        JsonObject toJson() {
            JsonObjectBuilder b = JSON.createObjectBuilder()
                    .add("seq", seq)
                    .add("time", epochMillis)
                    .add("consumer", consumer)
                    .add("outcome", outcome.name())
                    .add("layer", layer.name())
                    .add("keyDigest", keyDigest)
                    .add("reason", reason);
            if (attempt > 0) {
                b.add("attempt", attempt);
            }
            return b.build();
        }
    }

    private final Decision[] ring;
    /** The number the next decision gets. */
    private long next = 1;

    RecentDecisions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        ring = new Decision[capacity];
    }

    synchronized Decision add(long epochMillis, GuardEvent event, int attempt) {
        Decision d = new Decision(next, epochMillis, event.consumer(), event.outcome(), event.layer(), event.keyDigest(),
                event.reason(), attempt);
        ring[(int) (next % ring.length)] = d;
        next++;
        return d;
    }

    /** {@return the decisions numbered above {@code seq} that are still held, oldest first} */
    synchronized List<Decision> after(long seq) {
        long oldest = Math.max(1, next - ring.length);
        List<Decision> out = new ArrayList<>();
        for (long s = Math.max(seq + 1, oldest); s < next; s++) {
            out.add(ring[(int) (s % ring.length)]);
        }
        return out;
    }
}
