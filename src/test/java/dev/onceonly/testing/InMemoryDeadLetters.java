package dev.onceonly.testing;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.deadletter.DeadLetterAccess;

import java.nio.charset.StandardCharsets;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A dead-letter queue in memory that keeps {@link DeadLetterAccess}'s contract: a scan holds what it
 * returned until it removes it or closes; a republish leaves the original where it is. It records
 * what was republished, counts the scans, and can hide letters from the first scans (another read
 * holding them for a moment) or refuse a republish (no confirm). A decision on a replay
 * ({@link #decide}) reaches the scan that republished it, as the connector's reaches the replay's
 * reply queue; one on a letter nobody replayed is dropped.
 */
public final class InMemoryDeadLetters implements DeadLetterAccess {

    public record Entry(DeadLetter letter, byte[] body) implements Held {
    }

    public final List<Entry> queue = new ArrayList<>();
    public final List<String> republished = new ArrayList<>();
    public final AtomicInteger scans = new AtomicInteger();
    /** Ids held by another read during the first {@link #hiddenScans} scans. */
    public final Set<String> hidden = new HashSet<>();
    public int hiddenScans;
    /** Runs on each republish, after it is recorded (the connector settling the replay at once, say). */
    public Consumer<String> onRepublish = id -> { };
    public boolean refuseRepublish;
    /** Where the decision on each letter's replay goes: the scan that republished it. */
    private final Map<String, BlockingQueue<ReplayResult>> replyTo = new HashMap<>();

    /** The guard decided the replay of {@code id}: sent to the scan that republished it, if any. */
    public synchronized void decide(String id, ReplayResult.Status status, String detail) {
        BlockingQueue<ReplayResult> q = replyTo.get(id);
        if (q != null) {
            q.add(new ReplayResult(id, status, detail));
        }
    }

    private synchronized void replying(String id, BlockingQueue<ReplayResult> to) {
        replyTo.put(id, to);
    }

    /** A verified letter when {@code verified}, of consumer {@code inventory}, with a 64-digit body digest. */
    public static DeadLetter letter(String id, String outcome, boolean verified) {
        return new DeadLetter(id, "orders", outcome, "stock service down", 3, "inventory", Instant.EPOCH, "k-" + id,
                "ab".repeat(32), 4, 0, "shop", "order.placed", verified);
    }

    public InMemoryDeadLetters add(DeadLetter letter, String body) {
        return add(letter, body.getBytes(StandardCharsets.UTF_8));
    }

    public InMemoryDeadLetters add(DeadLetter letter, byte[] body) {
        queue.add(new Entry(letter, body));
        return this;
    }

    public List<String> ids() {
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
            private final BlockingQueue<ReplayResult> decisions = new LinkedBlockingQueue<>();

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
                replying(held.letter().id(), decisions);
                onRepublish.accept(held.letter().id());
            }

            @Override
            public ReplayResult decision(Duration within) {
                try {
                    return decisions.poll(within.toNanos(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
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
