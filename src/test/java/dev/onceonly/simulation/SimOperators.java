package dev.onceonly.simulation;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.internal.deadletter.DeadLetterChannels;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.deadletter.DeadLetterOperations;
import dev.onceonly.internal.ledger.LedgerPurge;
import dev.onceonly.internal.rabbitmq.SimConnector;
import dev.onceonly.testing.Settings;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The operator's paths, in the runs that draw them (RabbitMQ modes): the real
 * {@link DeadLetterOperations} (list, replay one, replay all, discard) called on a live instance at
 * times the seed draws, while deliveries, faults and other operators' reads go on; on every instance
 * the real {@link LedgerPurge}, pinned by the real {@link DeadLetterChannels#oldest()} (a read alone
 * of the dead-letter queue), with a retention that runs out while the run goes on, the claim store's
 * done marks with it. Some messages fail every run until a fix is deployed ({@link #FIX_AT_MS}),
 * and are dead-lettered: what operators replay. The broker's side of the reads is
 * {@link SimDeadLetterReads}.
 */
final class SimOperators {

    /** Chance that a run of a RabbitMQ mode has operators. */
    private static final double CHANCE = 0.25;
    /** Chance that a valid message of such a run fails every run until the fix. */
    private static final double BROKEN = 0.1;
    static final long FIX_AT_MS = 1_000;
    /** The ledger's retention and the claim store's, in these runs with the ledger: it runs out during the run. */
    static final Duration RETENTION = Duration.ofSeconds(1);
    private static final Duration PURGE_INTERVAL = Duration.ofMillis(100);
    private static final long ACTIONS_UNTIL_MS = 4_000;

    /** The operator's actions. */
    enum Action { LIST, REPLAY, REPLAY_ALL, DISCARD }

    /**
     * Runs of each new kind of action over the seeds run (the operator's actions, the ledger purge's
     * runs, the hostile producer's messages, stop-the-world pauses, runs with skewed clocks): what the
     * build's seeds give, printed by {@link SimulationTest}.
     */
    static final Map<String, Long> RUNS = new TreeMap<>();

    private final World w;
    final boolean on;
    private final Map<String, Boolean> broken = new LinkedHashMap<>();
    /** Dead letters an operator discarded: logical id → outcome, and how many. */
    private final Map<String, String> discardedOutcome = new LinkedHashMap<>();
    private final Map<String, Integer> discarded = new LinkedHashMap<>();
    private int pending;

    SimOperators(World w) {
        this.w = w;
        this.on = w.mode.guarded() && w.mode.jmsDeliveries() == 0 && w.loop.chance(CHANCE);
    }

    /** Whether the ledger's and the store's retention run out during this run: with the ledger. */
    boolean shortRetention() {
        return on && w.mode.ledger();
    }

    /** Whether the handler's run of {@code id} fails: by chance, or its message is broken until the fix. */
    boolean handlerFails(String id) {
        return w.loop.chance(w.mode.failChance()) || broken(id);
    }

    /** The consumer's settings: the mode's, remembering processed keys briefly where the retention runs out. */
    ConsumerSettings consumerSettings() {
        ConsumerSettings s = w.mode.consumerSettings();
        return shortRetention() ? Settings.withRetention(s, RETENTION) : s;
    }

    /** Whether the handler of {@code id} fails now because its message is one the fix is still to come for. */
    private boolean broken(String id) {
        if (!on || !id.startsWith("m")) {
            return false;
        }
        return broken.computeIfAbsent(id, i -> w.loop.chance(BROKEN))
                && w.loop.now() < TimeUnit.MILLISECONDS.toNanos(FIX_AT_MS);
    }

    /** Draws the run's operator actions. */
    void schedule() {
        if (!on) {
            return;
        }
        int actions = 3 + w.loop.random.nextInt(6);
        for (int i = 0; i < actions; i++) {
            Action a = Action.values()[w.loop.random.nextInt(Action.values().length)];
            long at = TimeUnit.MILLISECONDS.toNanos(200 + w.loop.random.nextLong(ACTIONS_UNTIL_MS));
            pending++;
            w.loop.schedule(w.broker.self, at, 0, () -> act(a));
        }
    }

    /** An instance started: its ledger purge, when the retention runs out in this run. */
    void started(SimInstance in) {
        if (!shortRetention()) {
            return;
        }
        Clock clock = w.stops.instanceClock();
        SimConnector c = in.connector();
        new LedgerPurge(w.db.ledger(in.owner), RETENTION, PURGE_INTERVAL, 100, clock, in.exec(),
                () -> {
                    count("ledger purge");
                    DeadLetterChannels queues = new DeadLetterChannels(() -> List.of(c.deadLetters()), clock);
                    Optional<Instant> oldest = queues.oldest();
                    oldest.ifPresent(w.hostile::pinned);
                    return oldest;
                });
    }

    /**
     * {@code a} on a live instance, as its REST endpoint or the command line runs it: its reads are on
     * the instance's connection and end with it (a crash of the instance ends the action there).
     */
    private void act(Action a) {
        List<SimInstance> live = w.live();
        if (live.isEmpty() || live.stream().anyMatch(in -> in.connector() == null)) {
            w.loop.schedule(w.broker.self, TimeUnit.MILLISECONDS.toNanos(50), 0, () -> act(a));
            return;
        }
        pending--;
        SimInstance in = w.loop.pick(live);
        count(a.name().toLowerCase());
        DeadLetterQueue q = new DeadLetterOperations(in.connector().deadLetters(), w.clock());
        w.loop.trace.event(in.name + " operator " + a);
        try {
            run(a, q, in);
        } catch (OnceOnlyException e) {
            // A dead letter's id is random (a UUID): the trace names letters by their messages, so that it replays.
            String why = e.getMessage().replaceAll("[0-9a-f-]{36}", "<id>");
            w.loop.trace.event(in.name + " operator " + a + " failed: " + why);
        }
    }

    private void run(Action a, DeadLetterQueue q, SimInstance in) {
        List<DeadLetter> letters = q.list(DeadLetterFilter.ALL, 0, 100).letters();
        if (a == Action.LIST || a == Action.REPLAY_ALL) {
            if (a == Action.REPLAY_ALL) {
                q.replayAll(DeadLetterFilter.ALL, Duration.ZERO)
                        .forEach(r -> w.loop.trace.event(in.name + " replay of " + w.reads.logicalIdOf(r.id()) + ": "
                                + r.status()));
            }
            return;
        }
        if (letters.isEmpty()) {
            return;
        }
        DeadLetter l = w.loop.pick(letters);
        if (a == Action.REPLAY) {
            String of = w.reads.logicalIdOf(l.id());
            w.loop.trace.event(in.name + " replay of " + of + ": " + (l.verified() ? q.replay(l.id(), Duration.ZERO)
                    : q.replayUnverified(l.id(), Duration.ZERO)).status());
            return;
        }
        q.discard(l.id()).ifPresent(gone -> {
            String id = w.reads.logicalIdOf(gone.id());
            w.loop.trace.event(in.name + " discarded a dead letter of " + id + " (" + gone.outcome() + ")");
            discarded.merge(id, 1, Integer::sum);
            discardedOutcome.put(id, gone.outcome());
        });
    }

    static void count(String what) {
        RUNS.merge(what, 1L, Long::sum);
    }

    /** {@return whether every action drawn ran and no read is open} */
    boolean settled() {
        return pending == 0 && w.reads.openReads() == 0;
    }

    /** Dead letters that left the queue by a discard: logical id → outcome, as the connector dead-lettered them. */
    Map<String, String> discarded() {
        return discardedOutcome;
    }

    /** After the run: a dead letter left its queue only replayed (confirmed) or discarded, and every read closed. */
    void check() {
        w.reads.removedUnreplayed.forEach((id, n) -> {
            if (n > discarded.getOrDefault(id, 0)) {
                w.loop.trace.violation(id + ": " + n + " dead letters removed without a confirmed replay, "
                        + discarded.getOrDefault(id, 0) + " discarded");
            }
        });
        if (w.reads.openReads() > 0) {
            w.loop.trace.violation(w.reads.openReads() + " dead-letter reads still open at rest");
        }
    }

    /**
     * A second effect of {@code id} that is the window docs/guarantees.md names for a retention shorter
     * than a message's redeliveries: its ledger row was purged and no replay of it was published (a
     * copy of its own came back after the retention). With a replay, the purge's pin had to keep the row.
     */
    boolean retentionRanOut(String id, String storeKey) {
        return shortRetention() && storeKey != null && w.db.purged.contains(storeKey)
                && w.reads.replaysStored.getOrDefault(id, 0) == 0;
    }

    /** What a double effect's report adds in these runs: the key's ledger row purged, replays of it stored. */
    String about(String id, String storeKey) {
        if (!on) {
            return "";
        }
        return " [operators: replays stored " + w.reads.replaysStored.getOrDefault(id, 0)
                + (storeKey != null && w.db.purged.contains(storeKey) ? ", its ledger row purged" : "") + "]";
    }
}
