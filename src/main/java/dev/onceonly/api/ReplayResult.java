package dev.onceonly.api;

/**
 * What became of one dead letter sent back to its original exchange and routing key.
 *
 * @param id     the dead letter's {@link DeadLetter#id()}
 * @param status what happened
 * @param detail in words: the guard's reason for a refusal, the failure's class for a failure; never a body or key
 */
public record ReplayResult(String id, Status status, String detail) {

    /**
     * What happened to a replay. {@link #PUBLISHED}, {@link #NOT_FOUND} and {@link #NOT_REPLAYABLE}
     * left the dead letter where it was; every other status removed it.
     */
    public enum Status {
        /** The guard ran the handler on the replay and its transaction committed. */
        PROCESSED,
        /**
         * The replay's key was processed already (a done mark or a ledger row): acknowledged as a
         * duplicate, the handler not run.
         */
        ALREADY_PROCESSED,
        /**
         * The guard refused the replay for good ({@code CONFLICT}: the key was processed with another
         * body; {@code REJECTED}): it is back in the dead-letter queue with the reason.
         */
        REFUSED,
        /** The handler failed again: retried, or back in the dead-letter queue, as the channel's retries say. */
        FAILED,
        /**
         * Published and confirmed by the broker, not decided within the wait (the copy still waits in
         * the work queue, or its decision was lost on its way back): the dead letter stays, and with it
         * the ledger purge's hold on its key's row. The guard decides as for any delivery, so a replay
         * of it again is acknowledged as a duplicate once the first copy was processed.
         */
        PUBLISHED,
        /** No dead letter with this id in the queue (replayed or discarded meanwhile, or held by another operation). */
        NOT_FOUND,
        /**
         * It stays in the queue: unverified, for {@link DeadLetterQueue#replay} and
         * {@link DeadLetterQueue#replayAll} (its headers carry no valid signature of the connector's:
         * only {@link DeadLetterQueue#replayUnverified} sends it); or verified, for
         * {@link DeadLetterQueue#replayUnverified}.
         */
        NOT_REPLAYABLE
    }
}
