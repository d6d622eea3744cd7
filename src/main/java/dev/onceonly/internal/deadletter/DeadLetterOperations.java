package dev.onceonly.internal.deadletter;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterPage;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.support.LogId;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * {@link DeadLetterQueue} over a {@link DeadLetterAccess}: each operation is one scan of the queue
 * from its head, which gives back everything it did not remove when it ends. A replay is published
 * and confirmed, and its dead letter removed only once the guard decided the copy (the access's
 * contract): a crash in between leaves a duplicate at worst, never a loss, and a copy waiting in the
 * work queue never lifts the ledger purge's pin on its key's row.
 */
public final class DeadLetterOperations implements DeadLetterQueue {

    /** Reads of the queue before a dead letter is taken for absent, and the pause between two. */
    private static final int READS = 3;
    private static final Duration PAUSE = Duration.ofMillis(150);

    private final DeadLetterAccess access;
    private final Clock clock;

    /**
     * @param access the queue
     * @param clock  what "now" is, for a filter's age
     */
    public DeadLetterOperations(DeadLetterAccess access, Clock clock) {
        this.access = access;
        this.clock = clock;
    }

    @Override
    public String channel() {
        return access.channel();
    }

    @Override
    public String queue() {
        return access.queue();
    }

    @Override
    public int count() {
        return access.count();
    }

    @Override
    public DeadLetterPage list(DeadLetterFilter filter, int offset, int limit) {
        if (offset < 0 || limit < 0) {
            throw new IllegalArgumentException("offset and limit must not be negative: " + offset + ", " + limit);
        }
        List<DeadLetter> page = new ArrayList<>();
        int matching = 0;
        int total = 0;
        try (DeadLetterAccess.Scan scan = access.scan()) {
            for (DeadLetterAccess.Held h = scan.next(); h != null; h = scan.next()) {
                total++;
                if (filter.matches(h.letter(), clock.instant())) {
                    if (matching >= offset && page.size() < limit) {
                        page.add(h.letter());
                    }
                    matching++;
                }
            }
        }
        return new DeadLetterPage(page, matching, total);
    }

    @Override
    public Optional<DeadLetter> find(String id) {
        return onFound(id, (scan, h) -> h.letter());
    }

    @Override
    public Optional<byte[]> body(String id) {
        return onFound(id, (scan, h) -> h.body().clone());
    }

    @Override
    public ReplayResult replay(String id, Duration wait) {
        return replayOne(id, wait, false);
    }

    @Override
    public ReplayResult replayUnverified(String id, Duration wait) {
        return replayOne(id, wait, true);
    }

    private ReplayResult replayOne(String id, Duration wait, boolean unverified) {
        return onFound(id, (scan, h) -> replay(scan, List.of(h), unverified, wait).get(0))
                .orElseGet(() -> new ReplayResult(id, ReplayResult.Status.NOT_FOUND, "no dead letter " + id + " in " + access.queue()));
    }

    @Override
    public List<ReplayResult> replayAll(DeadLetterFilter filter, Duration wait) {
        try (DeadLetterAccess.Scan scan = access.scan()) {
            List<DeadLetterAccess.Held> matching = new ArrayList<>();
            forEachMatching(scan, filter, matching::add);
            return replay(scan, matching, false, wait);
        }
    }

    @Override
    public Optional<DeadLetter> discard(String id) {
        return onFound(id, (scan, h) -> {
            remove(scan, h);
            return h.letter();
        });
    }

    @Override
    public List<DeadLetter> discardAll(DeadLetterFilter filter) {
        List<DeadLetter> removed = new ArrayList<>();
        try (DeadLetterAccess.Scan scan = access.scan()) {
            forEachMatching(scan, filter, h -> {
                remove(scan, h);
                removed.add(h.letter());
            });
        }
        return removed;
    }

    private void forEachMatching(DeadLetterAccess.Scan scan, DeadLetterFilter filter, Consumer<DeadLetterAccess.Held> action) {
        Predicate<DeadLetter> matches = l -> filter.matches(l, clock.instant());
        for (DeadLetterAccess.Held h = scan.next(); h != null; h = scan.next()) {
            if (matches.test(h.letter())) {
                action.accept(h);
            }
        }
    }

    /**
     * Applies {@code action} to the dead letter {@code id} in a scan, reading the queue again a few
     * times when it is not there: another read (a page, the purge's) may hold it for a moment.
     */
    private <T> Optional<T> onFound(String id, BiFunction<DeadLetterAccess.Scan, DeadLetterAccess.Held, T> action) {
        for (int read = 1; ; read++) {
            try (DeadLetterAccess.Scan scan = access.scan()) {
                for (DeadLetterAccess.Held h = scan.next(); h != null; h = scan.next()) {
                    if (h.letter().id().equals(id)) {
                        return Optional.of(action.apply(scan, h));
                    }
                }
            }
            if (read == READS) {
                return Optional.empty();
            }
            try {
                Thread.sleep(PAUSE.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
    }

    /**
     * Republishes each letter (confirmed), then removes each whose replay the guard decided within
     * {@code wait}: the order that loses nothing, and keeps a letter (and with it the purge's pin on
     * its key's row) while its copy is in flight. A verified letter only unless {@code unverified},
     * then an unverified one only: which one the operator looked at.
     *
     * @return one result per letter, in their order
     */
    private List<ReplayResult> replay(DeadLetterAccess.Scan scan, List<DeadLetterAccess.Held> letters,
                                      boolean unverified, Duration wait) {
        Map<String, ReplayResult> results = new LinkedHashMap<>();
        Map<String, DeadLetterAccess.Held> undecided = new HashMap<>();
        for (DeadLetterAccess.Held h : letters) {
            DeadLetter l = h.letter();
            if (l.verified() == unverified) {
                results.put(l.id(), new ReplayResult(l.id(), ReplayResult.Status.NOT_REPLAYABLE, unverified
                        ? "the dead letter is verified: replay it as the original"
                        : "unverified: its dead-letter headers carry no valid signature of this application's "
                                + "connector (planted, dead-lettered by the broker, or by a version before "
                                + "signatures); it is replayed only when asked for explicitly, as a new message to the "
                                + "channel's queue"));
            } else if (undecided.putIfAbsent(l.id(), h) == null) {
                scan.republish(h);
                results.put(l.id(), null);
                LogId.ONCE0801I.log(l.id(), access.channel(), describe(l),
                        l.verified() ? "as the original" : "unverified, as a new message", l.replays() + 1);
            }
        }
        long deadline = System.nanoTime() + wait.toNanos();
        while (!undecided.isEmpty()) {
            ReplayResult decided = scan.decision(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if (decided == null) {
                break;
            }
            DeadLetterAccess.Held h = undecided.remove(decided.id());
            if (h != null) {
                scan.remove(h);
                results.put(decided.id(), decided);
            }
        }
        undecided.keySet().forEach(id -> results.put(id, new ReplayResult(id, ReplayResult.Status.PUBLISHED,
                "published and confirmed, not decided within the wait: the dead letter stays until a replay of it is "
                        + "decided (replaying it again is safe: the guard finds its key if the copy was processed)")));
        return List.copyOf(results.values());
    }

    private void remove(DeadLetterAccess.Scan scan, DeadLetterAccess.Held h) {
        scan.remove(h);
        LogId.ONCE0802W.log(h.letter().id(), access.channel(), describe(h.letter()));
    }

    /** What a log line shows of a dead letter: no body, no key. */
    private static String describe(DeadLetter l) {
        return "consumer '" + l.consumer() + "', key " + (l.keyDigest().isEmpty() ? "-" : l.keyDigest())
                + ", body sha256 " + l.bodySha256().substring(0, Math.min(16, l.bodySha256().length()))
                + ", outcome " + (l.outcome().isEmpty() ? "-" : l.outcome());
    }
}
