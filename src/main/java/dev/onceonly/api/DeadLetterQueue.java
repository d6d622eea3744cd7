package dev.onceonly.api;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The dead letters of one channel, read without losing them: a read holds the messages it has
 * fetched unacknowledged and gives them back to the queue when it ends, so a crash at any point
 * leaves them there. A dead letter another read holds meanwhile is not seen by this one: a listing
 * may miss it, an operation on one id reads the queue again a few times before it answers that it
 * is not there.
 *
 * <p>A replay publishes the message, unchanged but for the dead-letter headers, to the channel's own
 * queue only (through the default exchange: no other queue bound where it was first published gets
 * it again), carrying, signed, the exchange and routing key it was first published with, so the
 * guard derives the key it derived the first time; marked as a replay and counting replays, with
 * publisher confirms and mandatory routing; only once the broker confirmed the copy is the dead
 * letter removed. Only a {@linkplain DeadLetter#verified() verified} dead letter is replayed so;
 * an unverified one only by {@link #replayUnverified}. A failure in between leaves both: the guard deduplicates the
 * copy. On its way back the
 * replay meets the guard like any delivery: a key already processed is acknowledged as a duplicate
 * ({@link ReplayResult.Status#ALREADY_PROCESSED}), a body that conflicts with the key's recorded one
 * is refused and dead-lettered again with the reason ({@link ReplayResult.Status#REFUSED}).
 *
 * <p>Every method reads the broker; each throws {@link OnceOnlyException} when it cannot be read,
 * having changed nothing it did not report.
 */
public interface DeadLetterQueue {

    /** {@return the channel whose dead-letter queue this is} */
    String channel();

    /** {@return the dead-letter queue's name} */
    String queue();

    /**
     * The broker's count, without reading the messages: cheap, for a gauge or a page.
     *
     * @return how many dead letters the queue holds, not counting those another operation holds meanwhile
     */
    int count();

    /**
     * @param filter which dead letters
     * @param offset how many matching ones to skip
     * @param limit  at most how many to return
     * @return one page of the matching dead letters, in queue order
     */
    DeadLetterPage list(DeadLetterFilter filter, int offset, int limit);

    /**
     * @param id a dead letter's id
     * @return the dead letter, if it is in the queue
     */
    Optional<DeadLetter> find(String id);

    /**
     * The body of a dead letter: the one way to read it.
     *
     * @param id a dead letter's id
     * @return its body, if it is in the queue
     */
    Optional<byte[]> body(String id);

    /**
     * Sends one dead letter back, then waits up to {@code wait} for the guard's decision on it, made
     * on whichever instance consumed the copy; the dead letter is removed only once it is decided.
     *
     * @param id   a dead letter's id
     * @param wait how long to wait for the decision; zero does not wait, and leaves the letter
     *             ({@link ReplayResult.Status#PUBLISHED})
     * @return what became of it
     */
    ReplayResult replay(String id, Duration wait);

    /**
     * Sends one {@linkplain DeadLetter#verified() unverified} dead letter (planted, dead-lettered by
     * the broker itself, or by a version before signatures) to the channel's own queue as a new
     * message: with none of its dead-letter headers believed, it keys as a message published
     * straight to the queue, so the guard recognises it as the original only where the key does
     * not depend on the exchange and routing key (a message id, a header, a JSON pointer), and its
     * time held no ledger row back. For an operator who looked at it; {@link #replay} and
     * {@link #replayAll} never do this.
     *
     * @param id   a dead letter's id
     * @param wait how long to wait for the decision; zero does not wait, and leaves the letter
     * @return what became of it ({@link ReplayResult.Status#NOT_REPLAYABLE} when it is verified: replay it with
     * {@link #replay})
     */
    ReplayResult replayUnverified(String id, Duration wait);

    /**
     * Sends back every dead letter matching {@code filter} (one read of the queue), then waits up to
     * {@code wait} in all for the guard's decisions; each letter is removed once its replay is decided.
     *
     * @param filter which dead letters
     * @param wait   how long to wait for the decisions, in all
     * @return what became of each, in queue order; dead letters that cannot be replayed (unverified ones) are
     * reported and stay
     */
    List<ReplayResult> replayAll(DeadLetterFilter filter, Duration wait);

    /**
     * Removes one dead letter for good.
     *
     * @param id a dead letter's id
     * @return the removed dead letter, empty when none has this id
     */
    Optional<DeadLetter> discard(String id);

    /**
     * Removes every dead letter matching {@code filter} for good (one read of the queue).
     *
     * @param filter which dead letters
     * @return the removed dead letters, in queue order
     */
    List<DeadLetter> discardAll(DeadLetterFilter filter);
}
