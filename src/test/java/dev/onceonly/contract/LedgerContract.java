package dev.onceonly.contract;

import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.MutableClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link Ledger} contract, once, for every implementation. Subclasses provide the ledger, the
 * business transaction it writes in, and ways to look at the database from outside.
 *
 * <h2>The contract checked</h2>
 * <ul>
 *   <li>{@link Ledger#insert} of a new key answers {@link LedgerDecision#INSERTED}. The row (key,
 *       consumer, body hash, the time of the ledger's clock) is written in the caller's
 *       transaction: invisible to others until that transaction commits, gone when it rolls back
 *       (the next insert of the key is then {@code INSERTED} again).</li>
 *   <li>An insert of a key with a committed row answers {@link LedgerDecision#DUPLICATE} when the
 *       body hash is the same and {@link LedgerDecision#CONFLICT} when it differs, and leaves the
 *       committed row as it was.</li>
 *   <li>An insert that collides with a row another transaction has not committed yet waits until
 *       that transaction ends, then decides: {@code DUPLICATE} (or {@code CONFLICT}) when it
 *       committed, {@code INSERTED} when it rolled back, because the databases let the waiting
 *       insert through then. {@link LedgerDecision#RETRY} is the answer when a violation was seen
 *       but no committed row is found by the time the verifier reads (the row was deleted in
 *       between, e.g. by the purge).</li>
 *   <li>The verifier reads in a new transaction: it sees a row committed after the caller's
 *       transaction took its snapshot, and works even where the database aborted the caller's
 *       transaction at the violation. Afterwards the caller's transaction is resumed, still open
 *       and marked rollback-only (the violation's persistence exception marks it, as JPA
 *       specifies); the engine rolls it back.</li>
 *   <li>An insert that fails for any other reason throws, and nothing of it commits.</li>
 *   <li>{@link Ledger#insertAll} of new keys answers {@code INSERTED} for each, and the rows commit
 *       with the transaction. Among keys with committed rows it refuses at least one, each refusal
 *       the decision {@link Ledger#insert} would make for that row (or {@code RETRY}), answers
 *       nothing but {@code INSERTED} or {@code null} for a new key, leaves the transaction
 *       rollback-only, and none of its rows commits.</li>
 *   <li>{@link Ledger#checkReady} passes when the table exists and throws when it does not.</li>
 *   <li>{@link Ledger#purge} deletes exactly the rows written before the cutoff (a row written at
 *       the cutoff stays), whatever the batch size (smaller than the number of rows, dividing it,
 *       larger; rows sharing one time across a batch boundary), returns how many it deleted, and
 *       keeps newer rows. Purges running at the same time all succeed and together delete every
 *       old row once.</li>
 * </ul>
 * Keys, consumers and body hashes are random per test, so suites can share a database. The purge
 * tests write their old rows before {@link #PURGE_CUTOFF}, years before any other test's rows,
 * and count exactly the rows older than it: no other suite may write such rows in the same
 * database at the same time (each subclass here has a scratch database of its own).
 *
 * <p>Tests that wait for another transaction never assert on time: they wait for the database to
 * report the waiting session, then end the blocking transaction, then take the answer from a
 * future, every wait bounded by {@link #PATIENCE}.
 */
public abstract class LedgerContract {

    /** Bound on every wait for something the test expects to happen. Never a timing assertion. */
    protected static final Duration PATIENCE = Duration.ofSeconds(60);
    /** The purge tests' cutoff: their old rows are written before it, every other row after. */
    protected static final Instant PURGE_CUTOFF = Instant.parse("2020-01-01T00:00:00Z");
    /** The {@code onceonly.key-prefix} of the ledger under test: every {@link #key()} starts with it. */
    protected static final String KEY_PREFIX = "oo:";
    private static final SecureRandom DIGESTS = new SecureRandom();

    protected MutableClock clock;
    protected Ledger ledger;
    protected ExecutorService threads;
    /** Unique per test: keys and consumers start with it. */
    protected String run;

    /** The ledger under test, writing the times of {@code clock}. */
    protected abstract Ledger newLedger(Clock clock);

    /**
     * Runs {@code work} in a new business transaction on the calling thread, the one
     * {@link Ledger#insert} writes in, and ends it when the work returns: commits it, or rolls it
     * back when it is marked rollback-only. When the work throws, rolls back and rethrows.
     */
    protected abstract <T> T inTransaction(TransactionalWork<T> work) throws Exception;

    /** The committed row of {@code key}, read in a transaction of its own; empty when there is none. */
    protected abstract Optional<Row> committedRow(String key) throws Exception;

    /** The row of {@code key} as the calling thread's current transaction reads it. */
    protected abstract Optional<Row> readInCurrentTransaction(String key) throws Exception;

    /** Deletes the row of {@code key} on a connection of its own and commits, as another instance's purge would. */
    protected abstract void deleteFromOutside(String key) throws Exception;

    /** How many sessions of the ledger's database wait for a lock right now. */
    protected abstract int lockWaiters() throws Exception;

    /** Has {@code action} run once, on the inserting thread, just before the ledger's verifier next reads. */
    protected abstract void beforeTheVerifierReads(Runnable action);

    /** Runs {@code check} with a ledger of the same kind on a database without the ledger table. */
    protected abstract void withoutTheTable(LedgerCheck check) throws Exception;

    /**
     * Whether a unique violation leaves the inserting transaction holding a lock on the committed
     * row it collided with, so that nobody can delete that row before the verifier reads it (and
     * {@code RETRY} cannot come from a purge). InnoDB does this: a duplicate-key error sets a shared
     * lock on the duplicate index record.
     */
    protected boolean violationLocksTheCollidingRow() {
        return false;
    }

    /** A row of the ledger. */
    public record Row(String key, String consumer, String bodyHash, Instant processedAt) {
    }

    /** The business transaction, as the work sees it. */
    public interface Transaction {
        /** Have it roll back when it ends. */
        void setRollbackOnly();

        boolean isRollbackOnly();

        /** Whether it is still the calling thread's current transaction (not ended, not suspended). */
        boolean isCurrent();
    }

    @FunctionalInterface
    public interface TransactionalWork<T> {
        T run(Transaction tx) throws Exception;
    }

    @FunctionalInterface
    public interface LedgerCheck {
        void check(Ledger ledger) throws Exception;
    }

    @BeforeEach
    void openLedger() {
        clock = new MutableClock();
        ledger = newLedger(clock);
        threads = Executors.newCachedThreadPool();
        run = "lc-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void stopThreads() throws InterruptedException {
        threads.shutdownNow();
        assertTrue(threads.awaitTermination(PATIENCE.toSeconds(), TimeUnit.SECONDS), "test threads ended");
    }

    // ---- insert ----

    @Test
    void newKeyIsInsertedAndItsRowCommitsWithTheTransaction() throws Exception {
        String key = key();
        String consumer = consumer();
        String hash = hash();
        Instant writtenAt = clock.instant();
        LedgerDecision decision = inTransaction(tx -> {
            LedgerDecision d = ledger.insert(key, consumer, hash);
            assertEquals(Optional.empty(), committedRow(key), "invisible outside before the commit");
            assertEquals(Optional.of(new Row(key, consumer, hash, writtenAt)), readInCurrentTransaction(key),
                    "visible in its own transaction");
            return d;
        });
        assertEquals(LedgerDecision.INSERTED, decision);
        assertEquals(Optional.of(new Row(key, consumer, hash, writtenAt)), committedRow(key));
    }

    @Test
    void rowOfARolledBackTransactionIsGoneSoTheKeyIsInsertedAgain() throws Exception {
        String key = key();
        String consumer = consumer();
        assertEquals(LedgerDecision.INSERTED, inTransaction(tx -> {
            LedgerDecision d = ledger.insert(key, consumer, hash());
            tx.setRollbackOnly();
            return d;
        }));
        assertEquals(Optional.empty(), committedRow(key));

        String second = hash();
        assertEquals(LedgerDecision.INSERTED, inTransaction(tx -> ledger.insert(key, consumer, second)));
        assertEquals(second, committedRow(key).orElseThrow().bodyHash());
    }

    @Test
    void insertAllOfNewKeysInsertsEveryRowWithTheTransaction() throws Exception {
        String consumer = consumer();
        List<Ledger.Row> rows = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            rows.add(new Ledger.Row(key(), consumer, hash()));
        }
        Instant writtenAt = clock.instant();
        List<LedgerDecision> answers = inTransaction(tx -> {
            List<LedgerDecision> a = ledger.insertAll(rows);
            assertEquals(Optional.empty(), committedRow(rows.get(0).key()), "invisible outside before the commit");
            return a;
        });
        assertEquals(List.of(LedgerDecision.INSERTED, LedgerDecision.INSERTED, LedgerDecision.INSERTED,
                LedgerDecision.INSERTED, LedgerDecision.INSERTED), answers);
        for (Ledger.Row r : rows) {
            assertEquals(Optional.of(new Row(r.key(), consumer, r.bodyHash(), writtenAt)), committedRow(r.key()));
        }
    }

    @Test
    void insertAllRefusesCommittedKeysAsInsertWouldAndCommitsNothing() throws Exception {
        String consumer = consumer();
        String hash = hash();
        Ledger.Row same = new Ledger.Row(key(), consumer, hash);
        Ledger.Row other = new Ledger.Row(key(), consumer, hash());
        inTransaction(tx -> ledger.insert(same.key(), consumer, hash));
        inTransaction(tx -> ledger.insert(other.key(), consumer, hash()));
        Ledger.Row fresh1 = new Ledger.Row(key(), consumer, hash());
        Ledger.Row fresh2 = new Ledger.Row(key(), consumer, hash());
        List<Ledger.Row> rows = List.of(fresh1, same, fresh2, other);

        boolean[] rollbackOnly = new boolean[1];
        List<LedgerDecision> answers = inTransaction(tx -> {
            List<LedgerDecision> a = ledger.insertAll(rows);
            rollbackOnly[0] = tx.isRollbackOnly();
            return a;
        });

        assertEquals(4, answers.size());
        assertTrue(rollbackOnly[0], "the transaction is left rollback-only");
        assertTrue(answers.stream().anyMatch(a -> a != null && a != LedgerDecision.INSERTED), "at least one refusal: " + answers);
        assertTrue(oneOf(answers.get(1), null, LedgerDecision.DUPLICATE, LedgerDecision.RETRY), "the same body: " + answers);
        assertTrue(oneOf(answers.get(3), null, LedgerDecision.CONFLICT, LedgerDecision.RETRY), "another body: " + answers);
        for (int i : new int[] {0, 2}) {
            assertTrue(oneOf(answers.get(i), null, LedgerDecision.INSERTED, LedgerDecision.RETRY),
                    "a new key is never refused as processed: " + answers);
        }
        assertEquals(Optional.empty(), committedRow(fresh1.key()), "nothing of the batch committed");
        assertEquals(Optional.empty(), committedRow(fresh2.key()));
        assertEquals(hash, committedRow(same.key()).orElseThrow().bodyHash(), "the committed rows are untouched");
    }

    private static boolean oneOf(LedgerDecision actual, LedgerDecision... allowed) {
        return java.util.Arrays.asList(allowed).contains(actual);
    }

    @Test
    void committedKeyWithTheSameBodyIsADuplicate() throws Exception {
        String key = key();
        String consumer = consumer();
        String hash = hash();
        Instant firstAt = clock.instant();
        inTransaction(tx -> ledger.insert(key, consumer, hash));
        clock.advance(Duration.ofMinutes(5));

        assertEquals(LedgerDecision.DUPLICATE, inTransaction(tx -> ledger.insert(key, consumer, hash)));
        assertEquals(Optional.of(new Row(key, consumer, hash, firstAt)), committedRow(key), "the first row is untouched");
    }

    @Test
    void committedKeyWithAnotherBodyIsAConflict() throws Exception {
        String key = key();
        String consumer = consumer();
        String hash = hash();
        inTransaction(tx -> ledger.insert(key, consumer, hash));

        assertEquals(LedgerDecision.CONFLICT, inTransaction(tx -> ledger.insert(key, consumer, hash())));
        assertEquals(hash, committedRow(key).orElseThrow().bodyHash(), "the first body's row stays");
    }

    /**
     * An empty hash compares nothing ({@code conflict=ignore}), whether it is the stored row's or the
     * new copy's: the rule the engine applies to the claim's fingerprint, so both layers agree also
     * for keys processed before a consumer's conflict policy changed.
     */
    @Test
    void anEmptyHashOnEitherSideIsADuplicate() throws Exception {
        String consumer = consumer();
        String ignored = key();
        inTransaction(tx -> ledger.insert(ignored, consumer, ""));
        assertEquals(LedgerDecision.DUPLICATE, inTransaction(tx -> ledger.insert(ignored, consumer, hash())));
        assertEquals("", committedRow(ignored).orElseThrow().bodyHash());

        String compared = key();
        String hash = hash();
        inTransaction(tx -> ledger.insert(compared, consumer, hash));
        assertEquals(LedgerDecision.DUPLICATE, inTransaction(tx -> ledger.insert(compared, consumer, "")));
        assertEquals(hash, committedRow(compared).orElseThrow().bodyHash());
    }

    @Test
    void keysDifferingOnlyInCaseAreTwoKeys() throws Exception {
        String lower = key() + ":abc";
        String upper = lower.substring(0, lower.length() - 3) + "ABC";
        String consumer = consumer();
        assertEquals(LedgerDecision.INSERTED, inTransaction(tx -> ledger.insert(lower, consumer, hash())));
        assertEquals(LedgerDecision.INSERTED, inTransaction(tx -> ledger.insert(upper, consumer, hash())));
        assertTrue(committedRow(lower).isPresent());
        assertTrue(committedRow(upper).isPresent());
    }

    /**
     * After the violation the caller's transaction is resumed: still the current one, marked
     * rollback-only, and nothing the caller wrote in it commits.
     */
    @Test
    void afterAViolationTheCallersTransactionIsResumedAndRollbackOnly() throws Exception {
        String key = key();
        String consumer = consumer();
        String hash = hash();
        inTransaction(tx -> ledger.insert(key, consumer, hash));
        String other = key();

        assertEquals(LedgerDecision.DUPLICATE, inTransaction(tx -> {
            assertEquals(LedgerDecision.INSERTED, ledger.insert(other, consumer, hash()));
            LedgerDecision d = ledger.insert(key, consumer, hash);
            assertTrue(tx.isCurrent(), "the caller's transaction is current again after the verifier's");
            assertTrue(tx.isRollbackOnly(), "the caller's transaction is marked rollback-only");
            return d;
        }));
        assertEquals(Optional.empty(), committedRow(other), "nothing of the caller's transaction committed");
    }

    /**
     * The verifier reads in a transaction of its own: the caller's transaction took its snapshot
     * before the colliding row was committed (MariaDB's REPEATABLE READ would still answer from that
     * snapshot; PostgreSQL refuses any statement after the violation), yet the decision is
     * {@code DUPLICATE}, not {@code RETRY}.
     */
    @Test
    void verifierSeesARowCommittedAfterTheCallersSnapshot() throws Exception {
        String key = key();
        String consumer = consumer();
        String hash = hash();
        assertEquals(LedgerDecision.DUPLICATE, inTransaction(tx -> {
            assertEquals(Optional.empty(), readInCurrentTransaction(key), "snapshot taken without the row");
            threads.submit(() -> inTransaction(other -> ledger.insert(key, consumer, hash)))
                    .get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            assertTrue(committedRow(key).isPresent(), "committed by the other transaction");
            return ledger.insert(key, consumer, hash);
        }));
    }

    @Test
    void insertThatFailsForAnotherReasonThrowsAndCommitsNothing() throws Exception {
        String tooLong = key() + ":" + "x".repeat(300);
        String consumer = consumer();
        String other = key();
        assertThrows(RuntimeException.class, () -> inTransaction(tx -> {
            ledger.insert(other, consumer, hash());
            return ledger.insert(tooLong, consumer, hash());
        }));
        assertEquals(Optional.empty(), committedRow(other), "the transaction rolled back");
        assertEquals(LedgerDecision.INSERTED, inTransaction(tx -> ledger.insert(other, consumer, hash())),
                "nothing was left behind for the key");
    }

    // ---- collisions with uncommitted rows ----

    @Test
    void insertCollidingWithAnUncommittedRowWaitsAndIsADuplicateWhenThatRowCommits() throws Exception {
        String key = key();
        String hash = hash();
        Collision c = collideWithUncommitted(key, hash, hash);
        c.end(true);
        assertEquals(LedgerDecision.DUPLICATE, c.answer());
        assertEquals(hash, committedRow(key).orElseThrow().bodyHash());
    }

    @Test
    void insertCollidingWithAnUncommittedRowWaitsAndIsAConflictWhenThatRowCommitsWithAnotherBody() throws Exception {
        String key = key();
        String first = hash();
        Collision c = collideWithUncommitted(key, first, hash());
        c.end(true);
        assertEquals(LedgerDecision.CONFLICT, c.answer());
        assertEquals(first, committedRow(key).orElseThrow().bodyHash());
    }

    @Test
    void insertCollidingWithAnUncommittedRowWaitsAndIsInsertedWhenThatRowRollsBack() throws Exception {
        String key = key();
        String second = hash();
        Collision c = collideWithUncommitted(key, hash(), second);
        c.end(false);
        assertEquals(LedgerDecision.INSERTED, c.answer());
        assertEquals(second, committedRow(key).orElseThrow().bodyHash(), "the waiting transaction's row committed");
    }

    /** The colliding row is deleted (as by a purge) after the violation and before the verifier reads. */
    @Test
    void violationWhoseRowIsGoneWhenTheVerifierReadsIsRetry() throws Exception {
        String key = key();
        String consumer = consumer();
        String hash = hash();
        inTransaction(tx -> ledger.insert(key, consumer, hash));
        List<Future<?>> deletion = new ArrayList<>();
        beforeTheVerifierReads(() -> {
            deletion.add(threads.submit(() -> {
                deleteFromOutside(key);
                return null;
            }));
            try {
                Eventually.await("the deletion to end or to wait for a lock", PATIENCE,
                        () -> deletion.get(0).isDone() || lockWaiters() > 0, done -> done);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        LedgerDecision decision = inTransaction(tx -> {
            LedgerDecision d = ledger.insert(key, consumer, hash);
            assertTrue(tx.isRollbackOnly());
            return d;
        });
        assertEquals(1, deletion.size(), "the verifier read once, after the hook");
        deletion.get(0).get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        if (violationLocksTheCollidingRow()) {
            assertEquals(LedgerDecision.DUPLICATE, decision, "the row could not be deleted before the verifier read it");
        } else {
            assertEquals(LedgerDecision.RETRY, decision);
        }
        assertEquals(Optional.empty(), committedRow(key));
        assertEquals(LedgerDecision.INSERTED, inTransaction(tx -> ledger.insert(key, consumer, hash)),
                "the key can be processed when the message comes back");
    }

    // ---- readiness ----

    @Test
    void checkReadyPassesWithTheTable() {
        ledger.checkReady();
    }

    @Test
    void checkReadyThrowsWithoutTheTable() throws Exception {
        withoutTheTable(l -> assertThrows(RuntimeException.class, l::checkReady));
    }

    // ---- purge ----

    /** Six old rows, one at the cutoff, two newer: every batch size deletes exactly the six. */
    @ParameterizedTest(name = "batch size {0}")
    @ValueSource(ints = {1, 4, 6, 50})
    void purgeDeletesExactlyTheRowsOlderThanTheCutoff(int batchSize) throws Exception {
        List<String> old = writeRows(6, PURGE_CUTOFF.minus(Duration.ofHours(1)), Duration.ofMinutes(1));
        List<String> atCutoff = writeRows(1, PURGE_CUTOFF, Duration.ZERO);
        List<String> newer = writeRows(2, PURGE_CUTOFF.plusMillis(1), Duration.ofDays(400));

        assertEquals(6, ledger.purge(PURGE_CUTOFF, batchSize));
        for (String key : old) {
            assertEquals(Optional.empty(), committedRow(key), "old row " + key);
        }
        for (String key : atCutoff) {
            assertTrue(committedRow(key).isPresent(), "a row written at the cutoff is not older than it");
        }
        for (String key : newer) {
            assertTrue(committedRow(key).isPresent(), "newer row " + key);
        }
        assertEquals(0, ledger.purge(PURGE_CUTOFF, batchSize), "nothing older is left");
    }

    @Test
    void purgeDeletesRowsSharingOneTimeAcrossABatchBoundary() throws Exception {
        Instant t = PURGE_CUTOFF.minus(Duration.ofDays(3));
        List<String> old = new ArrayList<>(writeRows(2, t.minusSeconds(10), Duration.ofSeconds(1)));
        old.addAll(writeRows(5, t, Duration.ZERO));

        assertEquals(7, ledger.purge(PURGE_CUTOFF, 3));
        for (String key : old) {
            assertEquals(Optional.empty(), committedRow(key), "old row " + key);
        }
    }

    @Test
    void purgeWithNothingOldDeletesNothing() throws Exception {
        List<String> newer = writeRows(3, PURGE_CUTOFF.plusSeconds(1), Duration.ofSeconds(1));
        assertEquals(0, ledger.purge(PURGE_CUTOFF, 2));
        for (String key : newer) {
            assertTrue(committedRow(key).isPresent());
        }
    }

    /**
     * Purges racing on the same rows all succeed and together delete every old row exactly once.
     * A purge may stop early when another one took the rows it was about to delete (it deleted
     * fewer than a batch); the next purge finds what is left.
     */
    @Test
    void purgesRunningAtTheSameTimeDoNotFailAndDeleteEveryOldRowOnce() throws Exception {
        int rows = 240;
        List<String> old = writeRows(rows, PURGE_CUTOFF.minus(Duration.ofDays(2)), Duration.ofSeconds(1));
        List<String> newer = writeRows(5, PURGE_CUTOFF.plusSeconds(1), Duration.ofSeconds(1));

        int purges = 4;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Long>> running = new ArrayList<>();
        for (int i = 0; i < purges; i++) {
            running.add(threads.submit(() -> {
                assertTrue(start.await(PATIENCE.toSeconds(), TimeUnit.SECONDS));
                return ledger.purge(PURGE_CUTOFF, 10);
            }));
        }
        start.countDown();
        long deleted = 0;
        for (Future<Long> f : running) {
            deleted += f.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        }
        deleted += ledger.purge(PURGE_CUTOFF, 10);

        assertEquals(rows, deleted, "every old row deleted once, by one of the purges");
        for (String key : old) {
            assertEquals(Optional.empty(), committedRow(key), "old row " + key);
        }
        for (String key : newer) {
            assertTrue(committedRow(key).isPresent(), "newer row " + key);
        }
    }

    // ---- helpers ----

    /**
     * One transaction inserts {@code key} and keeps its transaction open; another then inserts the
     * same key and must wait for it.
     */
    private Collision collideWithUncommitted(String key, String holderHash, String waiterHash) throws Exception {
        String consumer = consumer();
        CountDownLatch inserted = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        boolean[] commit = new boolean[1];
        Future<LedgerDecision> holder = threads.submit(() -> inTransaction(tx -> {
            LedgerDecision d = ledger.insert(key, consumer, holderHash);
            inserted.countDown();
            assertTrue(end.await(PATIENCE.toSeconds(), TimeUnit.SECONDS), "told to end");
            if (!commit[0]) {
                tx.setRollbackOnly();
            }
            return d;
        }));
        assertTrue(inserted.await(PATIENCE.toSeconds(), TimeUnit.SECONDS), "holder inserted");
        int waitingBefore = lockWaiters();
        Future<LedgerDecision> waiter = threads.submit(() -> inTransaction(tx -> ledger.insert(key, consumer, waiterHash)));
        Eventually.await("the second insert to wait for the first transaction", PATIENCE,
                () -> lockWaiters() > waitingBefore || waiter.isDone(), done -> done);
        assertFalse(waiter.isDone(), "the second insert waits while the first transaction is open");
        assertEquals(Optional.empty(), committedRow(key));
        return new Collision(holder, waiter, end, commit);
    }

    private record Collision(Future<LedgerDecision> holder, Future<LedgerDecision> waiter, CountDownLatch end,
                             boolean[] commit) {

        void end(boolean commitHolder) throws Exception {
            commit[0] = commitHolder;
            end.countDown();
            assertEquals(LedgerDecision.INSERTED, holder.get(PATIENCE.toSeconds(), TimeUnit.SECONDS));
        }

        LedgerDecision answer() throws Exception {
            return waiter.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        }
    }

    /** Commits {@code n} rows written at {@code first}, {@code first + step}, ...; returns their keys. */
    protected List<String> writeRows(int n, Instant first, Duration step) throws Exception {
        String consumer = consumer();
        List<String> keys = new ArrayList<>();
        inTransaction(tx -> {
            for (int i = 0; i < n; i++) {
                setClock(first.plus(step.multipliedBy(i)));
                String key = key();
                assertEquals(LedgerDecision.INSERTED, ledger.insert(key, consumer, hash()));
                keys.add(key);
            }
            return null;
        });
        return keys;
    }

    protected void setClock(Instant t) {
        clock.advance(Duration.between(clock.instant(), t));
    }

    /** A new random key of {@link #consumer()} under {@link #KEY_PREFIX}, shaped like the engine's. */
    protected String key() {
        return key(KEY_PREFIX, consumer());
    }

    /**
     * A new random key shaped like the engine's: {@code <prefix><consumer>:<digest>}, the digest 22
     * base64url characters (a 128-bit digest), which the purge relies on to tell applications apart.
     */
    protected static String key(String prefix, String consumer) {
        byte[] digest = new byte[16];
        DIGESTS.nextBytes(digest);
        return prefix + consumer + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
    }

    protected String consumer() {
        return run;
    }

    /** A random 64-character hex string, shaped like a SHA-256. */
    protected static String hash() {
        return (UUID.randomUUID().toString() + UUID.randomUUID()).replace("-", "");
    }
}
