package dev.onceonly.contract;

import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.outbox.OutboxStore.Failure;
import dev.onceonly.internal.outbox.OutboxStore.Selection;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link OutboxStore} contract, once, for every implementation: the real table and the
 * simulation's, so that what the simulation finds holds of the real one. Subclasses provide an
 * empty store and its transactions.
 *
 * <h2>The contract checked</h2>
 * <ul>
 *   <li>{@link OutboxStore#append} writes in the caller's transaction: {@link OutboxStore#find} sees
 *       the row there and, once committed, everywhere; another transaction does not see it before;
 *       after a rollback it is gone. A message id already there (committed, or written earlier in
 *       the transaction) makes the append write nothing and answer empty.</li>
 *   <li>{@link OutboxStore#relay} hands out the selected pending rows in id order, marks them as
 *       answered (sent; refused: one attempt more, parked at {@code maxAttempts}; not answered:
 *       pending and untouched), and reports how many it locked and the highest id.</li>
 *   <li>A row is held back (locked, not handed out, not marked) while an earlier pending row of its
 *       source is outside the selection or held by another relay, which passes by the rows it
 *       holds; a row another transaction has not committed holds nothing back. Looking at the earlier
 *       rows locks none of them.</li>
 * </ul>
 */
public abstract class OutboxStoreContract {

    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");
    private static final Selection ALL = Selection.oldest(NOW.plusSeconds(1), 0, 100);

    /** {@return the store, empty at the start of each test} */
    protected abstract OutboxStore store();

    /**
     * Runs {@code work} in a new transaction, committed when it returns and rolled back when it
     * throws; called inside another, that one is suspended, still open ({@code REQUIRES_NEW}).
     */
    protected abstract <T> T inNewTransaction(Supplier<T> work);

    /** {@return the {@code n}th row of {@code source}, message id {@code <source>/<n>}} */
    protected static OutboxRecord row(String source, int n) {
        return new OutboxRecord(0, source + "/" + n, source, OutboxMessage.text("", "q", "body " + n).withMessageId(source + "/" + n),
                NOW, 0);
    }

    private long committed(String source, int n) {
        return inNewTransaction(() -> store().append(row(source, n))).orElseThrow();
    }

    /** Relays {@code selection}, answering each row handed out with {@code answer}; returns the ids handed out, in order. */
    private List<Long> relay(Selection selection, Function<OutboxRecord, Optional<Failure>> answer, int maxAttempts) {
        List<Long> handed = new ArrayList<>();
        store().relay(selection, rows -> {
            Map<Long, Optional<Failure>> answers = new HashMap<>();
            for (OutboxRecord r : rows) {
                handed.add(r.id());
                Optional<Failure> a = answer.apply(r);
                if (a != null) {
                    answers.put(r.id(), a);
                }
            }
            return answers;
        }, maxAttempts, NOW);
        return handed;
    }

    @Test
    void aRowIsSeenByItsTransactionAloneUntilItCommits() {
        inNewTransaction(() -> {
            store().append(row("s", 1));
            assertTrue(store().find("s/1").isPresent(), "written earlier in this transaction");
            assertFalse(inNewTransaction(() -> store().find("s/1")).isPresent(), "not committed: another transaction does not see it");
            return null;
        });
        assertEquals("s", inNewTransaction(() -> store().find("s/1")).orElseThrow().source());
    }

    @Test
    void aRolledBackRowIsGone() {
        assertThrows(IllegalStateException.class, () -> inNewTransaction(() -> {
            store().append(row("s", 1));
            throw new IllegalStateException("the handler fails");
        }));
        assertFalse(inNewTransaction(() -> store().find("s/1")).isPresent());
        assertEquals(List.of(), relay(ALL, r -> Optional.empty(), 3));
        assertEquals(new OutboxStore.Counts(0, 0), store().counts());
    }

    @Test
    void aMessageIdAlreadyThereWritesNothingAndSaysSo() {
        long first = committed("s", 1);
        OutboxRecord other = new OutboxRecord(0, "s/1", "t", OutboxMessage.text("", "q", "another body"), NOW, 0);
        assertEquals(OptionalLong.empty(), inNewTransaction(() -> store().append(other)), "committed by another transaction");
        inNewTransaction(() -> {
            assertTrue(store().append(row("s", 2)).isPresent());
            assertEquals(OptionalLong.empty(), store().append(row("s", 2)), "written earlier in this transaction");
            return null;
        });
        assertEquals(new OutboxStore.Counts(2, 0), store().counts());
        assertEquals(first, inNewTransaction(() -> store().find("s/1")).orElseThrow().id(), "the row as it was");
        assertEquals("s", inNewTransaction(() -> store().find("s/1")).orElseThrow().source());
    }

    @Test
    void rowsGoOutInIdOrderAndConfirmedOnesAreMarkedSent() {
        long a = committed("s", 1);
        long b = committed("t", 1);
        long c = committed("s", 2);
        assertEquals(new OutboxStore.Relayed(3, c), store().relay(ALL, rows -> Map.of(), 3, NOW));
        assertEquals(List.of(a, b, c), relay(ALL, r -> Optional.empty(), 3));
        assertEquals(List.of(), relay(ALL, r -> Optional.empty(), 3), "sent: not handed out again");
        assertEquals(new OutboxStore.Counts(0, 0), store().counts());
        assertTrue(inNewTransaction(() -> store().find("s/2")).isPresent(), "a sent row is still found");
    }

    @Test
    void anUnansweredRowStaysPendingAndARefusedOneIsParkedAtMaxAttempts() {
        long a = committed("s", 1);
        assertEquals(List.of(a), relay(ALL, r -> null, 2));
        List<Integer> attempts = new ArrayList<>();
        relay(ALL, r -> {
            attempts.add(r.attempts());
            return Failure.refused("nacked");
        }, 2);
        assertEquals(new OutboxStore.Counts(1, 0), store().counts(), "one refusal of two: still pending");
        relay(ALL, r -> {
            attempts.add(r.attempts());
            return Failure.refused("nacked");
        }, 2);
        assertEquals(List.of(0, 1), attempts, "not answered counts nothing; a refusal counts one");
        assertEquals(new OutboxStore.Counts(0, 1), store().counts());
        assertEquals(List.of(), relay(ALL, r -> Optional.empty(), 2), "parked: not handed out again");
    }

    @Test
    void aRowIsHeldBackWhileAnEarlierPendingRowOfItsSourceIsNotSelected() {
        long a = committed("s", 1);
        long b = committed("s", 2);
        assertEquals(new OutboxStore.Relayed(1, b), store().relay(Selection.of(List.of(b)), rows -> {
            throw new AssertionError("nothing may go: " + rows);
        }, 3, NOW));
        assertEquals(new OutboxStore.Counts(2, 0), store().counts(), "held back untouched");
        assertEquals(List.of(a, b), relay(Selection.of(List.of(a, b)), r -> Optional.empty(), 3));
    }

    /**
     * Relays {@code outer} and, while it publishes, {@code inner}, confirming every row handed out;
     * returns the ids each handed out, outer first.
     */
    private List<List<Long>> nested(Selection outer, Selection inner) {
        List<Long> innerHanded = new ArrayList<>();
        List<Long> outerHanded = relay(outer, r -> {
            innerHanded.addAll(relay(inner, x -> Optional.empty(), 3));
            return Optional.empty();
        }, 3);
        return List.of(outerHanded, innerHanded);
    }

    @Test
    void aRelayPassesByRowsAnotherHoldsAndHoldsBackWhatComesAfterThem() {
        long a = committed("s", 1);
        long b = committed("s", 2);
        long other = committed("t", 1);
        List<List<Long>> handed = nested(Selection.of(List.of(a)), ALL);
        assertEquals(List.of(a), handed.get(0));
        assertEquals(List.of(other), handed.get(1), "a is held by the outer relay; b waits behind it; t goes");
        assertEquals(List.of(b), relay(ALL, r -> Optional.empty(), 3));
    }

    @Test
    void aRelayLocksNoEarlierRowItHoldsARowBackFor() {
        long a = committed("s", 1);
        long b = committed("s", 2);
        long other = committed("t", 1);
        List<List<Long>> handed = nested(Selection.of(List.of(b, other)), Selection.of(List.of(a)));
        assertEquals(List.of(other), handed.get(0), "b waits for a");
        assertEquals(List.of(a), handed.get(1), "the outer relay read a, as the row b waits for, and locked it not");
        assertEquals(List.of(b), relay(ALL, r -> Optional.empty(), 3));
    }

    @Test
    void aRowAnotherTransactionHasNotCommittedHoldsNothingBack() {
        List<Long> handed = inNewTransaction(() -> {
            store().append(row("s", 1));
            committed("s", 2);
            return relay(ALL, r -> Optional.empty(), 3);
        });
        assertEquals(1, handed.size(), "s/2 goes: s/1 is not committed");
        assertEquals(new OutboxStore.Counts(1, 0), store().counts(), "s/1 pending once committed");
    }
}
