package dev.onceonly.internal.deadletter;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.OnceOnlyException;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A dead-letter queue in memory that keeps {@link DeadLetterAccess}'s contract: a scan holds what it
 * returned until it removes it or closes; a republish leaves the original where it is. It records
 * what was republished, counts the scans, and can hide letters from the first scans (another read
 * holding them for a moment) or refuse a republish (no confirm).
 */
final class InMemoryDeadLetters implements DeadLetterAccess {

    record Entry(DeadLetter letter, byte[] body) implements Held {
    }

    final List<Entry> queue = new ArrayList<>();
    final List<String> republished = new ArrayList<>();
    final AtomicInteger scans = new AtomicInteger();
    /** Ids held by another read during the first {@link #hiddenScans} scans. */
    final Set<String> hidden = new HashSet<>();
    int hiddenScans;
    /** Runs on each republish, after it is recorded (the connector settling the replay at once, say). */
    Consumer<String> onRepublish = id -> { };
    boolean refuseRepublish;

    /** A verified letter when {@code verified}, of consumer {@code inventory}, with a 64-digit body digest. */
    static DeadLetter letter(String id, String outcome, boolean verified) {
        return new DeadLetter(id, "orders", outcome, "stock service down", 3, "inventory", Instant.EPOCH, "k-" + id,
                "ab".repeat(32), 4, 0, "shop", "order.placed", verified);
    }

    InMemoryDeadLetters add(DeadLetter letter, String body) {
        queue.add(new Entry(letter, body.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        return this;
    }

    List<String> ids() {
        return queue.stream().map(e -> e.letter().id()).toList();
    }

    @Override
    public String channel() {
        return "orders";
    }

    @Override
    public String queue() {
        return "orders.dlq";
    }

    @Override
    public int count() {
        return queue.size();
    }

    @Override
    public Scan scan() {
        boolean hiding = scans.incrementAndGet() <= hiddenScans;
        List<Entry> visible = queue.stream().filter(e -> !hiding || !hidden.contains(e.letter().id())).toList();
        return new Scan() {
            private int next;

            @Override
            public Held next() {
                return next < visible.size() ? visible.get(next++) : null;
            }

            @Override
            public void republish(Held held) {
                if (refuseRepublish) {
                    throw new OnceOnlyException("the broker did not confirm the replay");
                }
                republished.add(held.letter().id());
                onRepublish.accept(held.letter().id());
            }

            @Override
            public void remove(Held held) {
                queue.remove((Entry) held);
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public Scan scanAlone() {
        return scan();
    }
}
