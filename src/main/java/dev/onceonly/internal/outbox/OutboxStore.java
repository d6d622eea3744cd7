package dev.onceonly.internal.outbox;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * The outbox table. Rows are written in the business transaction ({@link #append}) and relayed in
 * transactions of their own ({@link #relay}) that lock the rows they publish, so that relays on
 * several instances never publish the same row at the same time.
 *
 * <p>A row is <em>pending</em> until it is marked sent (after the broker confirmed it) or parked
 * (after {@code maxAttempts} refusals); parked rows stay until an operator deals with them.
 *
 * <p>Order: the rows of one {@linkplain OutboxRecord#source() source} go out in id order. A relay
 * hands out a row only together with every earlier pending row of its source, so a row never goes
 * out while an earlier one of its source is pending elsewhere (locked by another relay, outside the
 * selection, beyond the limit); {@link #relay} holds it back instead.
 */
public interface OutboxStore {

    /**
     * Writes a row in the caller's current transaction, at once, so that a failure surfaces in the
     * handler and not at commit; unless a row with its message id is already there, committed by
     * another transaction (in any state, until it is purged) or written earlier in this one: then it
     * writes nothing and answers empty, and the caller reads that row with {@link #find}.
     *
     * <p>A row with that message id that another transaction wrote and has not committed makes the
     * append wait for that transaction; when it ends, the append writes (it rolled back) or answers
     * empty (it committed), or fails with the database's lock wait or unique key error; which of
     * these an implementation does, it says.
     *
     * @param record the row ({@link OutboxRecord#id()} is ignored)
     * @return the new row's id, or empty when a row with this message id is already there
     * @throws RuntimeException when the row cannot be written (the transaction must roll back)
     */
    OptionalLong append(OutboxRecord record);

    /**
     * Reads the row of {@code messageId} in the caller's current transaction, without locking it: a
     * row committed by another transaction (in any state, until it is purged) or written earlier in
     * this one. A row another transaction wrote and has not committed is not seen.
     *
     * @param messageId the message id
     * @return the row, or empty when there is none
     */
    Optional<OutboxRecord> find(String messageId);

    /**
     * In a new transaction: locks the pending rows selected, in id order, skipping rows another relay
     * holds; holds back each locked row that has an earlier pending row of its source which it did
     * not lock (such a row stays pending as it was, untouched); hands the others, in id order, to
     * {@code publish}; then marks each row as {@code publish} answered, and commits. Nothing may
     * publish a row once {@code publish} returned: the transaction ends then, and with it the lock.
     *
     * <p>Whether an earlier row is pending may be read without locking and as of any moment from the
     * start of the locking read on: a row only ever leaves the pending state, so a stale read only
     * holds back more. A row another transaction wrote and has not committed is not seen, so it holds back
     * nothing.
     *
     * @param selection which rows
     * @param publish   publishes the rows and answers, per row id, empty when the broker confirmed
     *                  it, {@link Failure#refused} when the broker refused it (counts an attempt),
     *                  or leaves the row out (not tried, or the broker could not be asked: it stays
     *                  pending as it was); not called when no row may go
     * @param maxAttempts refusals after which a row is parked
     * @param now       the time written as sent or parked
     * @return how many rows were locked (handed out or held back), and the highest id among them
     */
    Relayed relay(Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish, int maxAttempts,
                  Instant now);

    /**
     * Deletes sent rows sent before {@code olderThan}, in transactions of about {@code batchSize}
     * rows. Never deletes pending or parked rows.
     *
     * @param olderThan rows sent before this are deleted
     * @param batchSize rows per transaction
     * @return rows deleted
     */
    long purge(Instant olderThan, int batchSize);

    /** {@return how many rows are pending and parked now} Read in a transaction of its own. */
    Counts counts();

    /**
     * Checks once at startup that the table is there and usable.
     *
     * @throws RuntimeException saying what is missing
     */
    void checkReady();

    /**
     * Which pending rows a relay takes.
     *
     * @param ids           these rows (the fast path after a commit), or empty for the oldest
     * @param createdBefore only rows written before this (the sweep: rows a fast path should have
     *                      sent by now)
     * @param afterId       only rows with a higher id (the sweep's next page), 0 for all
     * @param limit         at most this many rows
     */
    record Selection(Collection<Long> ids, Instant createdBefore, long afterId, int limit) {

        /**
         * @param ids the rows a transaction just committed
         * @return a selection of exactly those rows, if still pending
         */
        public static Selection of(Collection<Long> ids) {
            return new Selection(List.copyOf(ids), Instant.MAX, 0, ids.size());
        }

        /**
         * @param createdBefore rows written before this
         * @param afterId       rows with a higher id than this (0 for all)
         * @param limit         at most this many
         * @return the oldest pending rows
         */
        public static Selection oldest(Instant createdBefore, long afterId, int limit) {
            return new Selection(List.of(), createdBefore, afterId, limit);
        }
    }

    /**
     * What one {@link #relay} did.
     *
     * @param locked how many rows it locked, handed out or held back
     * @param lastId the highest id among them, 0 when none: where the next page of a sweep starts
     */
    record Relayed(int locked, long lastId) {

        /** Nothing locked. */
        public static final Relayed NONE = new Relayed(0, 0);
    }

    /**
     * Why the broker refused a row.
     *
     * @param reason what it said; stored with the row, never a body
     */
    record Failure(String reason) {
        /**
         * @param reason what the broker said
         * @return the failure
         */
        public static Optional<Failure> refused(String reason) {
            return Optional.of(new Failure(reason));
        }
    }

    /**
     * @param pending rows waiting to be published
     * @param parked  rows given up on after repeated refusals
     */
    record Counts(long pending, long parked) {
    }
}
