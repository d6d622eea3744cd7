package dev.onceonly.api;

/**
 * What became of one dead letter sent back to its original exchange and routing key.
 *
 * @param id     the dead letter's {@link DeadLetter#id()}
 * @param status what happened
 * @param detail in words: the guard's reason for a refusal, the failure's class for a failure; never a body or key
 */
public record ReplayResult(String id, Status status, String detail) {

    /** What happened to a replay. Only {@link #NOT_FOUND} and {@link #NOT_REPLAYABLE} left the dead letter where it was. */
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
         * Published and confirmed by the broker, the dead letter removed; the guard's decision on it
         * was not seen here in time (another instance consumed it, or it is still waiting). The guard
         * decides as for any delivery: a key already processed is acknowledged as a duplicate.
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
