package dev.onceonly.rabbitmq;

/**
 * Headers the connector adds to messages it publishes on its own: dead-lettered messages, counted
 * retries and replays of dead letters. Everything else about a message (body, properties, the application's headers)
 * is published unchanged. (A retry copy also carries {@code x-onceonly-publish-seq}, with which the
 * connector matches a message the broker returns as unroutable to its publish.)
 */
public final class RabbitHeaders {

    /** Dead-letter: the guard's outcome ({@code FAILED}, {@code CONFLICT}, {@code REJECTED}...). */
    public static final String OUTCOME = "x-onceonly-outcome";
    /** Dead-letter: why, in words (for FAILED: the exception's class and message). */
    public static final String REASON = "x-onceonly-reason";
    /** Dead-letter: the guard's consumer name, or the channel name for a consumer without the guard. */
    public static final String CONSUMER = "x-onceonly-consumer";
    /** Dead-letter: the Reactive Messaging channel that gave up on the message. */
    public static final String CHANNEL = "x-onceonly-channel";
    /** Dead-letter: the queue the message was consumed from. */
    public static final String QUEUE = "x-onceonly-queue";
    /** Dead-letter: the number of attempts made. */
    public static final String ATTEMPTS = "x-onceonly-attempts";
    /** Dead-letter and retry: the exchange the message was originally published to. */
    public static final String ORIGINAL_EXCHANGE = "x-onceonly-exchange";
    /** Dead-letter and retry: the routing key the message was originally published with. */
    public static final String ORIGINAL_ROUTING_KEY = "x-onceonly-routing-key";
    /** Dead-letter: the dead letter's id, by which the dead-letter operations name it (a new one each time it is dead-lettered). */
    public static final String DEAD_LETTER_ID = "x-onceonly-dead-letter-id";
    /** Dead-letter: when it was dead-lettered, in milliseconds since the epoch. */
    public static final String DEAD_LETTERED_AT = "x-onceonly-dead-lettered-at";
    /** Dead-letter: the digest of the guard's key, as the log lines show it; absent when no key was derived. */
    public static final String KEY_DIGEST = "x-onceonly-key-digest";
    /**
     * Dead-letter: proof that the connector wrote the dead-letter headers, an HMAC-SHA256 with a key
     * derived from the channel's copy-signing key over them and the body's SHA-256. A dead letter
     * without a valid one is shown as unverified: its time holds no ledger row back, and it is
     * replayed only when an operator asks for it explicitly, as a new message to the channel's queue.
     */
    public static final String DEAD_LETTER_SIGNATURE = "x-onceonly-dead-letter-signature";
    /** Replay: the id of the dead letter this message is a replay of. */
    public static final String REPLAY_OF = "x-onceonly-replay-of";
    /** Replay, and kept on a dead letter: how often the message was replayed from a dead-letter queue. */
    public static final String REPLAYS = "x-onceonly-replays";
    /**
     * Retry copy (classic queues): failed attempts so far. The connector republishes a failed
     * message with this header instead of requeueing it, so the count travels with the message to
     * whichever instance receives it next.
     */
    public static final String RETRY_ATTEMPTS = "x-onceonly-retry-attempts";
    /**
     * Proof that a retry copy was made by this connector: an HMAC-SHA256 over the queue, the
     * attempts and the original exchange, routing key and body. A copy without a valid one is never
     * believed (its count and original names could be forged by anyone allowed to publish to the
     * default exchange); it is dead-lettered with the reason.
     */
    public static final String SIGNATURE = "x-onceonly-signature";
    /** Set by quorum queues: how often the message was returned to the queue. Ignored on classic queues. */
    public static final String DELIVERY_COUNT = "x-delivery-count";

    private RabbitHeaders() {
    }
}
