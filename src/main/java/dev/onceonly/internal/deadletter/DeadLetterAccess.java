package dev.onceonly.internal.deadletter;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.ReplayResult;

import java.time.Duration;

/**
 * What the dead-letter operations need of a dead-letter queue; the connector implements it on the
 * broker. The contract that makes the operations safe:
 * <ul>
 *   <li>a {@link Scan} holds every message it returned until it {@linkplain Scan#remove removes}
 *       it or is closed; closing (or a crash, or a lost connection) gives back every message held
 *       and not removed, so nothing is ever lost by reading;</li>
 *   <li>{@link Scan#republish} returns only once the broker confirmed the copy; it never removes
 *       the original, so a failure after it leaves the original in the queue and at worst a
 *       duplicate, which the guard deduplicates;</li>
 *   <li>the guard's decision on a copy comes back to the scan that published it
 *       ({@link Scan#decision}), from whichever instance consumed it: an operation removes a letter
 *       only once its replay is decided, so that the letter keeps the ledger purge's pin on its
 *       key's row while the copy is in flight.</li>
 * </ul>
 */
public interface DeadLetterAccess {

    /** {@return the channel whose dead-letter queue this is} */
    String channel();

    /** {@return the dead-letter queue} */
    String queue();

    /**
     * @return the broker's count of the messages ready in the queue; 0 when it does not exist
     * @throws dev.onceonly.api.OnceOnlyException when the broker cannot be asked
     */
    int count();

    /**
     * Starts reading the queue from its head. While the scan is open, a {@link #scanAlone()} of the
     * queue cannot start (this one may wait a few seconds for one that runs).
     *
     * @return the scan
     * @throws dev.onceonly.api.OnceOnlyException when the queue cannot be read
     */
    Scan scan();

    /**
     * Starts reading the queue from its head, alone: only when no other scan of the queue (on any
     * instance, or the command line) is open, and none can start until this one closes. It therefore
     * returns every message the queue holds, where another scan's would miss those a concurrent
     * scan holds: what the ledger purge's pin needs. (A reader outside the library, such as the
     * broker's management page, is not seen.)
     *
     * @return the scan
     * @throws dev.onceonly.api.OnceOnlyException when another scan is open, or the queue cannot be read
     */
    Scan scanAlone();

    /**
     * One read of the queue, holding what it returned: the messages the queue held when it began,
     * never those that arrive while it runs (a replay dead-lettered again). Used by one thread.
     */
    interface Scan extends AutoCloseable {

        /**
         * @return the next message, held until removed or until the scan closes; {@code null} when none is left
         * @throws dev.onceonly.api.OnceOnlyException when the queue cannot be read
         */
        Held next();

        /**
         * Publishes a replay of {@code held} to the channel's own queue only, marked as a replay of
         * it, and waits for the broker's confirm; {@code held} stays held. A
         * {@linkplain DeadLetter#verified() verified} letter's replay keys as the original (its
         * exchange and routing key travel signed); an unverified one's as a new message.
         *
         * @param held a message this scan returned
         * @throws dev.onceonly.api.OnceOnlyException when the broker did not confirm it (refused, unroutable, no answer)
         */
        void republish(Held held);

        /**
         * Waits for the guard's decision on a replay this scan published.
         *
         * @param within the longest wait
         * @return the next decision received (its id is the letter's), or {@code null} when none came in time
         */
        ReplayResult decision(Duration within);

        /**
         * Removes {@code held} from the queue for good (acknowledges it).
         *
         * @param held a message this scan returned
         * @throws dev.onceonly.api.OnceOnlyException when the broker connection failed; the message then stays
         */
        void remove(Held held);

        /** Gives back every message held and not removed. */
        @Override
        void close();
    }

    /** A message a scan holds. */
    interface Held {
        /** {@return what an operator sees of it} */
        DeadLetter letter();

        /** {@return its body} */
        byte[] body();
    }
}
