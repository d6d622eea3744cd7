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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * {@link DeadLetterQueue} over a {@link DeadLetterAccess}: each operation is one scan of the queue
 * from its head, which gives back everything it did not remove when it ends. A replay is published
 * and confirmed before its dead letter is removed (the access's contract), so a crash in between
 * leaves a duplicate at worst, never a loss.
 */
public final class DeadLetterOperations implements DeadLetterQueue {

    /** Reads of the queue before a dead letter is taken for absent, and the pause between two. */
    private static final int READS = 3;
    private static final Duration PAUSE = Duration.ofMillis(150);

    private final DeadLetterAccess access;
    private final ReplayWatch watch;
    private final Clock clock;

    /**
     * @param access the queue
     * @param watch  where this instance's connector reports its decisions on replays
     * @param clock  what "now" is, for a filter's age
     */
    public DeadLetterOperations(DeadLetterAccess access, ReplayWatch watch, Clock clock) {
        this.access = access;
        this.watch = watch;
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
        return onFound(id, (scan, h) -> send(scan, h, unverified)).map(p -> awaitAll(List.of(p), wait).get(0))
                .orElseGet(() -> new ReplayResult(id, ReplayResult.Status.NOT_FOUND, "no dead letter " + id + " in " + access.queue()));
    }

    @Override
    public List<ReplayResult> replayAll(DeadLetterFilter filter, Duration wait) {
        List<Pending> decisions = new ArrayList<>();
        try (DeadLetterAccess.Scan scan = access.scan()) {
            forEachMatching(scan, filter, h -> decisions.add(send(scan, h, false)));
        }
        return awaitAll(decisions, wait);
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

    /** A replay sent, and the decision this instance may see on it. */
    private record Pending(String id, CompletableFuture<ReplayResult> decision) {
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
     * Republishes (confirmed), then removes: the order that loses nothing. A verified letter only
     * unless {@code unverified}, then an unverified one only: which one the operator looked at.
     */
    private Pending send(DeadLetterAccess.Scan scan, DeadLetterAccess.Held h, boolean unverified) {
        DeadLetter l = h.letter();
        if (l.verified() == unverified) {
            return new Pending(l.id(), CompletableFuture.completedFuture(new ReplayResult(l.id(), ReplayResult.Status.NOT_REPLAYABLE,
                    unverified ? "the dead letter is verified: replay it as the original"
                            : "unverified: its dead-letter headers carry no valid signature of this application's "
                                    + "connector "
                            + "(planted, dead-lettered by the broker, or by a version before signatures); it is "
                            + "replayed only when asked for explicitly, as a new message to the channel's queue")));
        }
        CompletableFuture<ReplayResult> decision = watch.expect(l.id());
        try {
            scan.republish(h);
        } catch (RuntimeException e) {
            watch.forget(l.id());
            throw e;
        }
        scan.remove(h);
        LogId.ONCE0801I.log(l.id(), access.channel(), describe(l), l.verified() ? "as the original" : "unverified, "
                + "as a new message",
                l.replays() + 1);
        return new Pending(l.id(), decision);
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

    /** Waits for every decision until one shared deadline; those not seen by then are reported as published. */
    private List<ReplayResult> awaitAll(List<Pending> decisions, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        List<ReplayResult> results = new ArrayList<>();
        for (Pending p : decisions) {
            results.add(await(p, Math.max(0, deadline - System.nanoTime())));
        }
        return results;
    }

    private ReplayResult await(Pending p, long nanos) {
        try {
            return p.decision.get(nanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return published(p);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return published(p);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a replay's decision is never completed exceptionally", e);
        }
    }

    /** Not decided in time: no longer waited for, reported as published. */
    private ReplayResult published(Pending p) {
        watch.forget(p.id);
        ReplayResult late = p.decision.getNow(null);
        if (late != null) {
            return late;
        }
        return new ReplayResult(p.id, ReplayResult.Status.PUBLISHED,
                "published and confirmed; the guard's decision was not seen on this instance in time");
    }
}
