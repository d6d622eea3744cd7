package dev.onceonly.simulation;

import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.spi.TransactionRunner;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** One instance's view of {@link SimOutbox}, the table: the {@link OutboxStore} contract on it. */
final class SimOutboxStore implements OutboxStore {

    private final SimOutbox t;
    private final SimLoop.Owner owner;
    private final TransactionRunner transactions;
    private final double earlyStop;

    SimOutboxStore(SimOutbox table, SimLoop.Owner owner, TransactionRunner transactions, double earlyStop) {
        this.t = table;
        this.owner = owner;
        this.transactions = transactions;
        this.earlyStop = earlyStop;
    }

    /** {@inheritDoc} A row of the id another transaction has not committed: a lock wait that times out. */
    @Override
    public OptionalLong append(OutboxRecord record) {
        SimDatabase.Tx tx = t.db.current();
        t.loop.roundTrip(owner, 500);
        String id = record.messageId();
        if (t.byMessageId.containsKey(id)) {
            return OptionalLong.empty();
        }
        for (Map.Entry<SimDatabase.Tx, List<SimOutbox.Row>> e : t.uncommitted.entrySet()) {
            SimDatabase.Tx other = e.getKey();
            if (other.over || e.getValue().stream().noneMatch(r -> r.written.messageId().equals(id))) {
                continue;
            }
            if (other == tx) {
                return OptionalLong.empty();
            }
            if (t.runOf.get(tx) == other) {
                t.loop.trace.violation(owner + ": a send in a REQUIRES_NEW transaction waits for its own handler's row "
                        + id + " (ids not unique per handler run): a lock wait that ends only in a timeout, on every run");
            }
            t.loop.pause(owner, TimeUnit.MILLISECONDS.toNanos(50));
            throw new IllegalStateException("lock wait timeout: the message id's row is held by an open transaction");
        }
        SimOutbox.Row row = new SimOutbox.Row(++t.lastId, record, tx);
        t.uncommitted.computeIfAbsent(tx, written -> {
            written.completions.add(committed -> t.ended(written, committed));
            return new ArrayList<>();
        }).add(row);
        return OptionalLong.of(row.id);
    }

    @Override
    public Optional<OutboxRecord> find(String messageId) {
        t.loop.roundTrip(owner, 500);
        SimOutbox.Row committed = t.byMessageId.get(messageId);
        if (committed != null) {
            return Optional.of(committed.record());
        }
        return t.uncommitted.getOrDefault(t.db.current(), List.of()).stream()
                .filter(r -> r.written.messageId().equals(messageId)).findFirst().map(SimOutbox.Row::record);
    }

    @Override
    public Relayed relay(Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish,
                         int maxAttempts, Instant now) {
        if (selection.limit() < 1) {
            return Relayed.NONE;
        }
        try {
            return transactions.run(() -> relayIn(t.db.current(), selection, publish, maxAttempts, now), committed -> { });
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private Relayed relayIn(SimDatabase.Tx tx, Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish,
                            int maxAttempts, Instant now) {
        t.loop.roundTrip(owner, 1_000);
        List<SimOutbox.Row> locked = lock(tx, selection);
        if (locked.isEmpty()) {
            return Relayed.NONE;
        }
        Map<Long, Optional<Failure>> marks = new LinkedHashMap<>();
        tx.completions.add(committed -> {
            t.locks.values().removeIf(holder -> holder == tx);
            if (committed) {
                marks.forEach((id, answer) -> mark(t.rows.get(id), answer, maxAttempts, now));
            }
        });
        Relayed relayed = new Relayed(locked.size(), locked.get(locked.size() - 1).id);
        List<SimOutbox.Row> out = mayGoOut(tx, locked);
        if (out.isEmpty()) {
            return relayed;
        }
        Set<Long> handed = new LinkedHashSet<>();
        out.forEach(r -> handed.add(r.id));
        boolean early = t.loop.trace.fault(t.loop.chance(earlyStop), owner + "'s relay stops waiting for confirms early");
        SimOutbox.Relay relay = new SimOutbox.Relay(owner, handed, t.commits,
                t.loop.now() + (early ? t.loop.random.nextLong(TimeUnit.MILLISECONDS.toNanos(2)) : SimOutbox.RELAY_WAIT_NANOS));
        t.publishing.addFirst(relay);
        Map<Long, Optional<Failure>> answers;
        try {
            answers = publish.apply(out.stream().map(SimOutbox.Row::record).toList());
        } finally {
            t.publishing.remove(relay);
        }
        for (Long id : handed) {
            if (answers.containsKey(id)) {
                marks.put(id, answers.get(id));
            }
        }
        t.loop.roundTrip(owner, 1_000);
        return relayed;
    }

    /** The selected pending rows, in id order, passing by rows another (live) relay holds. */
    private List<SimOutbox.Row> lock(SimDatabase.Tx tx, Selection selection) {
        List<SimOutbox.Row> locked = new ArrayList<>();
        for (SimOutbox.Row r : t.rows.tailMap(selection.afterId(), false).values()) {
            if (locked.size() >= selection.limit()) {
                break;
            }
            SimDatabase.Tx holder = t.locks.get(r.id);
            boolean selected = selection.ids().isEmpty() || selection.ids().contains(r.id);
            if (r.state == SimOutbox.PENDING && selected && r.written.createdAt().isBefore(selection.createdBefore())
                    && (holder == null || holder.over)) {
                t.locks.put(r.id, tx);
                locked.add(r);
            }
        }
        return locked;
    }

    /** The locked rows with no earlier pending row of their source left out of the lock. */
    private List<SimOutbox.Row> mayGoOut(SimDatabase.Tx tx, List<SimOutbox.Row> locked) {
        Map<String, Long> firstGap = new HashMap<>();
        Set<String> sources = new HashSet<>();
        locked.forEach(r -> sources.add(r.written.source()));
        for (SimOutbox.Row r : t.rows.headMap(locked.get(locked.size() - 1).id, false).values()) {
            if (r.state == SimOutbox.PENDING && sources.contains(r.written.source()) && t.locks.get(r.id) != tx) {
                firstGap.merge(r.written.source(), r.id, Math::min);
            }
        }
        return locked.stream().filter(r -> r.id < firstGap.getOrDefault(r.written.source(), Long.MAX_VALUE)).toList();
    }

    private void mark(SimOutbox.Row row, Optional<Failure> answer, int maxAttempts, Instant now) {
        if (answer.isEmpty()) {
            row.state = SimOutbox.SENT;
            row.sentAt = now;
            return;
        }
        row.attempts++;
        row.lastError = answer.get().reason();
        row.state = row.attempts >= maxAttempts ? SimOutbox.PARKED : SimOutbox.PENDING;
    }

    @Override
    public long purge(Instant olderThan, int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
        }
        t.loop.roundTrip(owner, 1_000);
        List<SimOutbox.Row> gone = t.rows.values().stream().filter(r -> r.state == SimOutbox.SENT && r.sentAt.isBefore(olderThan)).toList();
        gone.forEach(r -> {
            t.rows.remove(r.id);
            t.byMessageId.remove(r.written.messageId());
        });
        return gone.size();
    }

    @Override
    public Counts counts() {
        t.loop.roundTrip(owner, 1_000);
        return new Counts(t.rows.values().stream().filter(r -> r.state == SimOutbox.PENDING).count(),
                t.rows.values().stream().filter(r -> r.state == SimOutbox.PARKED).count());
    }

    @Override
    public void checkReady() {
    }
}
