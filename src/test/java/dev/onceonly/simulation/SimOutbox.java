package dev.onceonly.simulation;

import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.spi.TransactionRunner;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The outbox table in {@link SimDatabase}, by the {@link OutboxStore} contract: rows appended in the
 * caller's transaction (seen by it alone until it commits, gone when it rolls back or its instance
 * dies), a unique message id whose insert waits for another open transaction's uncommitted row (the
 * wait ends in a lock timeout, as for the ledger's key), relays in transactions of their own that lock
 * rows, pass by rows other relays hold and hold back rows behind an earlier pending one of their
 * source. {@link #store} is one instance's view of it.
 *
 * <p>For the checks: which relay is inside its publish now ({@link #publishing}), which rows the
 * broker confirmed at least once, and which transaction wrote each row.
 */
final class SimOutbox {

    static final int PENDING = 0;
    static final int SENT = 1;
    static final int PARKED = 2;

    /** One row. */
    static final class Row {
        final long id;
        final OutboxRecord written;
        final SimDatabase.Tx tx;
        int state = PENDING;
        int attempts;
        String lastError;
        Instant sentAt;
        /** The number of the commit that made it visible, 0 before. */
        long commit;

        Row(long id, OutboxRecord written, SimDatabase.Tx tx) {
            this.id = id;
            this.written = written;
            this.tx = tx;
        }

        OutboxRecord record() {
            return new OutboxRecord(id, written.messageId(), written.source(), written.message(), written.createdAt(), attempts);
        }
    }

    /** A relay inside its publish: the rows it handed out, what had committed when it read which may go, when it stops waiting. */
    record Relay(SimLoop.Owner owner, Set<Long> handedOut, long commitsRead, long deadline) {
    }

    /** How long a relay waits for its confirms (virtual; the relay's own wait, in real time, only has to end). */
    static final long RELAY_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(400);

    /** Committed rows by id. */
    final TreeMap<Long, Row> rows = new TreeMap<>();
    final Map<String, Row> byMessageId = new HashMap<>();
    /** Rows the broker confirmed at least once (the relay may have ignored a late confirm). */
    final Set<Long> confirmed = new HashSet<>();
    /** Relays inside their publish, innermost first (a relay pauses for confirms, and others run meanwhile). */
    final Deque<Relay> publishing = new ArrayDeque<>();
    final Map<SimDatabase.Tx, List<Row>> uncommitted = new LinkedHashMap<>();
    final Map<Long, SimDatabase.Tx> locks = new HashMap<>();
    /** A handler's {@code REQUIRES_NEW} transaction → the handler's own transaction. */
    final Map<SimDatabase.Tx, SimDatabase.Tx> runOf = new HashMap<>();
    final Map<String, Plan> plans = new HashMap<>();
    final SimDatabase db;
    final SimLoop loop;
    long lastId;
    long commits;

    SimOutbox(SimDatabase db, SimLoop loop) {
        this.db = db;
        this.loop = loop;
    }

    /**
     * What a handler sends for one message, the same on every run: {@code sends} messages (0 to 2),
     * the {@code nested}-th from a {@code REQUIRES_NEW} transaction (0: none).
     */
    record Plan(int sends, int nested) {
    }

    /** {@return the plan of logical message {@code id}, drawn at its first run} */
    Plan plan(String id, java.util.SplittableRandom random) {
        return plans.computeIfAbsent(id, k -> {
            int sends = random.nextInt(3);
            return new Plan(sends, sends > 0 && random.nextInt(3) == 0 ? 1 + random.nextInt(sends) : 0);
        });
    }

    /**
     * A publish of {@code row} by {@code owner}'s relay, checked as it is made: the row is committed
     * and handed out by the relay of {@code owner} inside its publish now (so it holds the row's
     * lock); every earlier row of its source that had committed when that relay read which rows may
     * go is sent, parked, or confirmed by the broker already.
     *
     * @return the relay publishing it, null when none is (a violation)
     */
    Relay checkPublish(SimLoop.Owner owner, OutboxRecord row) {
        Relay relay = publishing.peekFirst();
        if (relay == null || relay.owner() != owner || !relay.handedOut().contains(row.id())) {
            loop.trace.violation(owner + " published " + row.messageId() + " outside the relay transaction holding its lock");
            relay = null;
        }
        Row committed = rows.get(row.id());
        if (committed == null) {
            loop.trace.violation(owner + " published " + row.messageId() + ", a row no transaction committed");
            return relay;
        }
        long seen = relay == null ? commits : relay.commitsRead();
        for (Row earlier : rows.headMap(row.id(), false).values()) {
            if (earlier.state == PENDING && earlier.commit <= seen && earlier.written.source().equals(row.source())
                    && !confirmed.contains(earlier.id)) {
                loop.trace.violation(owner + " published " + row.messageId() + " while the earlier " + earlier.written.messageId()
                        + " of its source was pending and never confirmed");
            }
        }
        return relay;
    }

    /** {@code inner} is a {@code REQUIRES_NEW} transaction the handler of {@code outer} started; null ends that. */
    void sameRun(SimDatabase.Tx inner, SimDatabase.Tx outer) {
        if (outer == null) {
            runOf.remove(inner);
        } else {
            runOf.put(inner, outer);
        }
    }

    /** {@return whether no committed row is pending} */
    boolean settled() {
        for (Row r : rows.values()) {
            if (r.state == PENDING) {
                return false;
            }
        }
        return true;
    }

    void ended(SimDatabase.Tx tx, boolean committed) {
        List<Row> written = uncommitted.remove(tx);
        if (committed && written != null) {
            commits++;
            for (Row r : written) {
                r.commit = commits;
                rows.put(r.id, r);
                byMessageId.put(r.written.messageId(), r);
            }
        }
    }

    /** {@return the store as {@code owner} sees it; its relays run in {@code transactions}} */
    OutboxStore store(SimLoop.Owner owner, TransactionRunner transactions, double earlyStopChance) {
        return new SimOutboxStore(this, owner, transactions, earlyStopChance);
    }
}
