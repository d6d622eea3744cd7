package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.outbox.OutboxStore.Failure;
import dev.onceonly.internal.outbox.OutboxStore.Selection;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The outbox table's contract on {@link JpaOutboxStore}, with Hibernate in the test JVM on a scratch
 * database and the container's transactions emulated by {@link LocalJta}. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JpaOutboxStoreTestBase {

    private ScratchDatabase db;
    private LocalJta jta;
    private OutboxStore store;
    private final Instant now = Instant.parse("2026-12-01T10:00:00Z");

    protected abstract ScratchDatabase.Kind kind();

    @BeforeAll
    void createDatabase() throws Exception {
        db = ScratchDatabase.create(kind(), true);
        jta = new LocalJta(db.sessionFactory());
        store = new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "oo:");
    }

    @AfterAll
    void dropDatabase() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    @BeforeEach
    void empty() throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.executeUpdate("delete from onceonly_outbox");
        }
    }

    private OutboxRecord record(String source, int n) {
        OutboxMessage m = OutboxMessage.text("orders", "order.reserved", "body " + n).withHeader("n", n)
                .withHeader("big", 5_000_000_000L).withHeader("ok", true).withHeader("who", "test")
                .withCorrelationId("c-" + n);
        return new OutboxRecord(0, source + "/" + n, source, m.withMessageId(source + "/" + n), now, 0);
    }

    private List<Long> appendCommitted(String source, int count) throws Exception {
        return jta.inTransaction(() -> {
            List<Long> ids = new ArrayList<>();
            for (int n = 1; n <= count; n++) {
                ids.add(store.append(record(source, n)).orElseThrow());
            }
            return ids;
        });
    }

    private Map<Long, Integer> states() throws Exception {
        Map<Long, Integer> states = new HashMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select id, state from onceonly_outbox")) {
            while (r.next()) {
                states.put(r.getLong(1), r.getInt(2));
            }
        }
        return states;
    }

    @Test
    void aRowCommitsWithItsTransactionAndComesBackAsItWasWritten() throws Exception {
        List<Long> ids = appendCommitted("c:k1", 1);
        List<OutboxRecord> seen = new ArrayList<>();
        assertEquals(new OutboxStore.Relayed(1, ids.get(0)), store.relay(Selection.of(ids), rows -> {
            seen.addAll(rows);
            return Map.of();
        }, 5, now));
        OutboxRecord read = seen.get(0);
        OutboxRecord written = record("c:k1", 1);
        assertEquals(written.messageId(), read.messageId());
        assertEquals("c:k1", read.source());
        assertEquals(written.message().exchange(), read.message().exchange());
        assertEquals(written.message().routingKey(), read.message().routingKey());
        assertArrayEquals(written.message().body(), read.message().body());
        assertEquals(written.message().contentType(), read.message().contentType());
        assertEquals("c-1", read.message().correlationId());
        assertEquals(Map.of("n", 1, "big", 5_000_000_000L, "ok", true, "who", "test"), read.message().headers());
        assertEquals(Integer.class, read.message().headers().get("n").getClass(), "an Integer header stays an Integer");
        assertEquals(now, read.createdAt());
        assertEquals(Map.of(ids.get(0), JpaOutboxStore.PENDING), states(), "not answered: still pending");
    }

    @Test
    void aRolledBackTransactionLeavesNoRow() throws Exception {
        assertThrows(IllegalStateException.class, () -> jta.inTransaction(() -> {
            store.append(record("c:k2", 1));
            throw new IllegalStateException("the handler failed");
        }));
        assertEquals(Map.of(), states());
    }

    @Test
    void aMessageIdIsInTheOutboxOnce() throws Exception {
        appendCommitted("c:k3", 1);
        assertEquals(OptionalLong.empty(), jta.inTransaction(() -> store.append(record("c:k3", 1))));
        assertEquals(1, states().size());
    }

    /**
     * Two runs send the same message id at once: the second insert waits for the first transaction,
     * and once that commits, it writes nothing and says so (its caller then reads the row), on every
     * database, rather than failing on the unique key.
     */
    @Test
    void aMessageIdAnotherTransactionHasNotCommittedWritesNothingOnceThatCommits() throws Exception {
        CountDownLatch firstWrote = new CountDownLatch(1);
        CountDownLatch commitFirst = new CountDownLatch(1);
        CompletableFuture<OptionalLong> first = CompletableFuture.supplyAsync(() -> {
            try {
                return jta.inTransaction(() -> {
                    OptionalLong id = store.append(record("c:k9", 1));
                    firstWrote.countDown();
                    commitFirst.await(30, TimeUnit.SECONDS);
                    return id;
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(firstWrote.await(30, TimeUnit.SECONDS));
        CompletableFuture<OptionalLong> second = CompletableFuture.supplyAsync(() -> {
            try {
                return jta.inTransaction(() -> store.append(record("c:k9", 1)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(300); // the second insert is waiting for the first transaction's row (or has not begun)
        commitFirst.countDown();
        assertTrue(first.get(30, TimeUnit.SECONDS).isPresent());
        assertEquals(OptionalLong.empty(), second.get(30, TimeUnit.SECONDS), "the row is there: nothing written");
        assertEquals(1, states().size());
    }

    @Test
    void aRowIsFoundByItsMessageIdOnceCommittedAndInItsOwnTransaction() throws Exception {
        assertEquals(Optional.empty(), jta.inTransaction(() -> store.find("c:k8/1")));
        long inOwn = jta.inTransaction(() -> {
            long id = store.append(record("c:k8", 1)).orElseThrow();
            assertEquals(id, store.find("c:k8/1").orElseThrow().id(), "written earlier in this transaction");
            return id;
        });
        OutboxRecord found = jta.inTransaction(() -> store.find("c:k8/1")).orElseThrow();
        assertEquals(inOwn, found.id());
        assertEquals("c:k8", found.source());
        assertArrayEquals(record("c:k8", 1).message().body(), found.message().body());
    }

    @Test
    void confirmedRowsAreSentRefusedRowsCountAttemptsAndAreParkedAtTheLimitUnansweredRowsStayAsTheyWere() throws Exception {
        List<Long> ids = appendCommitted("c:k4", 3);
        for (int round = 1; round <= 2; round++) {
            store.relay(Selection.of(ids), rows -> {
                Map<Long, Optional<Failure>> answers = new HashMap<>();
                rows.stream().map(OutboxRecord::id).filter(ids.get(0)::equals).forEach(id -> answers.put(id, Optional.empty()));
                rows.stream().map(OutboxRecord::id).filter(ids.get(2)::equals).forEach(id -> answers.put(id, Failure.refused("unroutable")));
                return answers;
            }, 2, now);
        }
        Map<Long, Integer> states = states();
        assertEquals(JpaOutboxStore.SENT, states.get(ids.get(0)));
        assertEquals(JpaOutboxStore.PENDING, states.get(ids.get(1)), "not answered twice: pending, no attempt counted");
        assertEquals(JpaOutboxStore.PARKED, states.get(ids.get(2)), "refused twice with max-attempts 2: parked");
        assertEquals(new OutboxStore.Counts(1, 1), store.counts());
        List<Integer> attempts = new ArrayList<>();
        store.relay(Selection.oldest(now.plusSeconds(1), 0, 10), rows -> {
            rows.forEach(r -> attempts.add(r.attempts()));
            return Map.of();
        }, 2, now);
        assertEquals(List.of(0), attempts, "only the pending row is taken again, with no attempt counted");
    }

    @Test
    void theSweepTakesOnlyRowsWrittenBeforeItsLimitOldestFirst() throws Exception {
        List<Long> ids = appendCommitted("c:k5", 3);
        List<Long> seen = new ArrayList<>();
        store.relay(Selection.oldest(now, 0, 10), rows -> {
            rows.forEach(r -> seen.add(r.id()));
            return Map.of();
        }, 5, now);
        assertEquals(List.of(), seen, "rows written at 'now' are not older than 'now'");
        store.relay(Selection.oldest(now.plusMillis(1), 0, 2), rows -> {
            rows.forEach(r -> seen.add(r.id()));
            return Map.of();
        }, 5, now);
        assertEquals(ids.subList(0, 2), seen);
    }

    /**
     * Two relays at once never hold the same row: the second passes by the rows the first has locked
     * (its publish is still waiting for the broker) and takes only the others (of other sources: a
     * row after a held one of its own source would be held back).
     */
    @Test
    void twoRelaysAtOnceNeverTakeTheSameRow() throws Exception {
        for (int i = 0; i < 6; i++) {
            appendCommitted("c:k6-" + i, 1);
        }
        CountDownLatch firstHolds = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Long> first = new ArrayList<>();
        CompletableFuture<OutboxStore.Relayed> a = CompletableFuture.supplyAsync(() -> store.relay(
                Selection.oldest(now.plusSeconds(1), 0, 4), rows -> {
                    rows.forEach(r -> first.add(r.id()));
                    firstHolds.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return rows.stream().collect(Collectors.toMap(OutboxRecord::id, r -> Optional.<Failure>empty()));
                }, 5, now));
        assertTrue(firstHolds.await(30, TimeUnit.SECONDS));
        List<Long> second = new ArrayList<>();
        store.relay(Selection.oldest(now.plusSeconds(1), 0, 10), rows -> {
            rows.forEach(r -> second.add(r.id()));
            return rows.stream().collect(Collectors.toMap(OutboxRecord::id, r -> Optional.<Failure>empty()));
        }, 5, now);
        release.countDown();
        assertEquals(4, a.get(30, TimeUnit.SECONDS).locked());
        assertEquals(4, first.size());
        assertEquals(2, second.size(), "the second relay took only the rows the first did not hold: " + second);
        assertTrue(second.stream().noneMatch(first::contains));
        assertTrue(states().values().stream().allMatch(s -> s == JpaOutboxStore.SENT));
    }

    /** Relays {@code selection}, confirming every row handed out; returns the ids handed out, in order. */
    private List<Long> relayConfirming(Selection selection) {
        return relayConfirming(store, selection);
    }

    /**
     * A row is not handed out while an earlier row of its source is pending and not handed out with
     * it: whatever the selection's boundaries (here the fast path's ids), a source goes out in order.
     */
    @Test
    void aRowIsHeldBackWhileAnEarlierRowOfItsSourceIsPendingOutsideTheSelection() throws Exception {
        List<Long> ids = appendCommitted("c:o1", 3);
        assertEquals(List.of(), relayConfirming(Selection.of(ids.subList(1, 3))), "/1 is pending and not selected");
        assertEquals(List.of(ids.get(0), ids.get(1)), relayConfirming(Selection.oldest(now.plusSeconds(1), 0, 2)));
        assertEquals(List.of(ids.get(2)), relayConfirming(Selection.of(ids.subList(2, 3))), "the earlier rows are sent now");
    }

    /**
     * While one relay holds a source's first row (its publish waits for the broker), another relay
     * passes that row by and holds back the rows after it, and takes other sources' rows.
     */
    @Test
    void aRowIsHeldBackWhileAnotherRelayHoldsAnEarlierRowOfItsSource() throws Exception {
        List<Long> source = appendCommitted("c:o2", 3);
        List<Long> other = appendCommitted("c:o3", 1);
        CountDownLatch firstHolds = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<List<Long>> a = CompletableFuture.supplyAsync(() -> {
            List<Long> handed = new ArrayList<>();
            store.relay(Selection.oldest(now.plusSeconds(1), 0, 1), rows -> {
                rows.forEach(r -> handed.add(r.id()));
                firstHolds.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return rows.stream().collect(Collectors.toMap(OutboxRecord::id, r -> Optional.<Failure>empty()));
            }, 5, now);
            return handed;
        });
        try {
            assertTrue(firstHolds.await(30, TimeUnit.SECONDS));
            assertEquals(other, relayConfirming(Selection.oldest(now.plusSeconds(1), 0, 10)), "/2 and /3 wait for /1");
        } finally {
            release.countDown();
        }
        assertEquals(source.subList(0, 1), a.get(30, TimeUnit.SECONDS));
        assertEquals(source.subList(1, 3), relayConfirming(Selection.oldest(now.plusSeconds(1), 0, 10)));
    }

    /**
     * A relay counts the rows it held back as locked, and a sweep's next page starts after the last
     * of them: a page full of held-back rows does not stop a sweep short of other sources' rows.
     */
    @Test
    void aPageStartsAfterTheLastRowTheRelayBeforeLockedHeldBackOrNot() throws Exception {
        List<Long> held = appendCommitted("c:p1", 2);
        List<Long> other = appendCommitted("c:p2", 1);
        assertEquals(new OutboxStore.Relayed(1, held.get(1)), store.relay(Selection.of(held.subList(1, 2)), rows -> {
            throw new AssertionError("handed out a row held back: " + rows);
        }, 5, now));
        List<Long> handed = new ArrayList<>();
        assertEquals(new OutboxStore.Relayed(2, other.get(0)), store.relay(Selection.oldest(now.plusSeconds(1), held.get(0), 10),
                rows -> {
                    rows.forEach(r -> handed.add(r.id()));
                    return Map.of();
                }, 5, now));
        assertEquals(other, handed, "after /1 of c:p1, whose /2 waits for it");
    }

    /** A parked row no longer holds back the rows after it in its source. */
    @Test
    void aParkedRowDoesNotHoldBackTheRowsAfterIt() throws Exception {
        List<Long> ids = appendCommitted("c:o4", 2);
        store.relay(Selection.of(ids.subList(0, 1)), rows -> Map.of(ids.get(0), Failure.refused("unroutable")), 1, now);
        assertEquals(JpaOutboxStore.PARKED, states().get(ids.get(0)));
        assertEquals(ids.subList(1, 2), relayConfirming(Selection.of(ids.subList(1, 2))));
    }

    @Test
    void thePurgeDeletesOnlySentRowsSentBeforeItsLimit() throws Exception {
        List<Long> ids = appendCommitted("c:k7", 4);
        store.relay(Selection.of(ids.subList(0, 2)), rows -> rows.stream()
                .collect(Collectors.toMap(OutboxRecord::id, r -> Optional.<Failure>empty())), 5, now);
        store.relay(Selection.of(ids.subList(2, 3)), rows -> rows.stream()
                .collect(Collectors.toMap(OutboxRecord::id, r -> Optional.<Failure>empty())), 5, now.plusSeconds(60));
        assertEquals(0, store.purge(now, 1), "sent at 'now': not before it");
        assertEquals(2, store.purge(now.plusSeconds(1), 1), "in batches of one");
        assertEquals(Map.of(ids.get(2), JpaOutboxStore.SENT, ids.get(3), JpaOutboxStore.PENDING), states());
    }

    /** Relays {@code selection} through {@code store}, confirming every row handed out; returns the ids handed out. */
    private List<Long> relayConfirming(OutboxStore through, Selection selection) {
        List<Long> handed = new ArrayList<>();
        through.relay(selection, rows -> {
            rows.forEach(r -> handed.add(r.id()));
            return rows.stream().collect(Collectors.toMap(OutboxRecord::id, r -> Optional.<Failure>empty()));
        }, 5, now);
        return handed;
    }

    /**
     * Two applications on one database, with the key prefixes {@code a:} and {@code b:}: each relays
     * (sweep and fast path), counts and purges only its own rows.
     */
    @Test
    void twoApplicationsOnOneDatabaseTouchOnlyTheirOwnRows() throws Exception {
        OutboxStore a = new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "a:");
        OutboxStore b = new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "b:");
        long rowA = jta.inTransaction(() -> a.append(record("a:c:k", 1)).orElseThrow());
        long rowB = jta.inTransaction(() -> b.append(record("b:c:k", 1)).orElseThrow());
        assertEquals(new OutboxStore.Counts(1, 0), a.counts());
        assertEquals(new OutboxStore.Counts(1, 0), b.counts());
        assertEquals(new OutboxStore.Counts(0, 0), store.counts(), "the scope oo: counts neither");
        assertEquals(List.of(rowA), relayConfirming(a, Selection.oldest(now.plusSeconds(1), 0, 10)));
        assertEquals(List.of(rowB), relayConfirming(b, Selection.of(List.of(rowA, rowB))), "not a:'s row, even by id");
        assertEquals(List.of(), relayConfirming(store, Selection.oldest(now.plusSeconds(1), 0, 10)));
        assertEquals(Map.of(rowA, JpaOutboxStore.SENT, rowB, JpaOutboxStore.SENT), states());
        assertEquals(1, a.purge(now.plusSeconds(1), 10));
        assertEquals(Map.of(rowB, JpaOutboxStore.SENT), states(), "a: purged its own row only");
        assertEquals(0, store.purge(now.plusSeconds(1), 10));
        assertEquals(1, b.purge(now.plusSeconds(1), 10));
    }

    /**
     * A table created by an earlier version, without {@code app_scope}: the check says what to do,
     * the shipped DDL adds the column, and the rows it had get the scope {@code ''}, which every
     * application relays and counts as before.
     */
    @Test
    void aTableFromBeforeScopesGetsTheColumnAndItsRowsStayEveryApplications() throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("alter table onceonly_outbox drop column app_scope");
        }
        IllegalStateException missing = assertThrows(IllegalStateException.class, store::checkReady);
        assertTrue(missing.getMessage().contains("apply META-INF/onceonly/ddl/"), missing.getMessage());
        try (Connection c = db.connect(); PreparedStatement s = c.prepareStatement("insert into onceonly_outbox"
                + " (message_id, source_key, exchange_name, routing_key, persistent, headers, body, state, created_at, attempts)"
                + " values ('old/1', 'old', 'orders', 'order.reserved', true, '{}', ?, 0, ?, 0)")) {
            s.setBytes(1, new byte[] {1});
            s.setLong(2, now.toEpochMilli());
            s.executeUpdate();
        }
        db.applyDdl(LedgerSchema.Part.OUTBOX);
        store.checkReady();
        OutboxStore b = new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "b:");
        assertEquals(new OutboxStore.Counts(1, 0), store.counts());
        assertEquals(new OutboxStore.Counts(1, 0), b.counts());
        List<Long> handed = relayConfirming(b, Selection.oldest(now.plusSeconds(1), 0, 10));
        assertEquals(1, handed.size());
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select app_scope, state from onceonly_outbox")) {
            assertTrue(r.next());
            assertEquals("", r.getString(1));
            assertEquals(JpaOutboxStore.SENT, r.getInt(2));
        }
        assertEquals(1, store.purge(now.plusSeconds(1), 10), "a sent row from before scopes is purged by any application");
    }

    @Test
    void headersKeepTheirTypes() {
        Map<String, Object> headers = Map.of("s", "ü\"x", "i", Integer.MIN_VALUE, "l", Long.MAX_VALUE, "b", false);
        assertEquals(headers, OutboxHeaders.fromJson(OutboxHeaders.toJson(headers)));
        assertEquals(Map.of(), OutboxHeaders.fromJson(OutboxHeaders.toJson(Map.of())));
    }
}
