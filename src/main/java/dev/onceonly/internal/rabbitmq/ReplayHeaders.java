package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.rabbitmq.RabbitHeaders;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a replay of a dead letter learns the guard's decision on its copy, on whichever instance
 * consumed it, and how a copy dead-lettered again keeps its letter's first time.
 *
 * <p>A replay publishes its copy with a <em>stamp</em>: the letter's id, the time it was first
 * dead-lettered (a verified letter's only: an unverified letter's time is anyone's to write), and
 * the queue where the replay waits for the decision (a server-named, exclusive queue of the replay's
 * own AMQP channel), signed for the channel's queue. The consumer that settles the copy believes a
 * stamp this connector signed and nothing else: it sends the decision, signed, to that queue, and
 * dates a copy it dead-letters again with the stamped time, which is what the ledger purge's pin
 * keeps the key's row for. A dead letter leaves its queue only once the decision on its replay came
 * ({@link DeadLetterEndpoint}): until then it holds the pin, however long the copy waits.
 */
final class ReplayHeaders {

    /** On a copy: when its letter was first dead-lettered, in epoch milliseconds. */
    static final String LETTER_AT = "x-onceonly-replay-letter-at";
    /** On a copy: the queue its replay waits on for the decision. */
    static final String REPLY_TO = "x-onceonly-replay-reply-to";
    /** On a copy: the signature of its stamp. */
    static final String STAMP = "x-onceonly-replay-stamp";
    /** On a decision: the {@link ReplayResult.Status}. */
    static final String STATUS = "x-onceonly-replay-status";
    /** On a decision: the reason, never a body or key. */
    static final String DETAIL = "x-onceonly-replay-detail";
    /** On a decision: its signature. */
    static final String DECISION_SIGNATURE = "x-onceonly-replay-decision-signature";
    /** What a replay adds to its copy, replaced on the next replay. */
    static final List<String> STAMPED = List.of(RabbitHeaders.REPLAY_OF, LETTER_AT, REPLY_TO, STAMP);

    /** A stamp this connector signed: which letter, its first time (null when unverified), where the decision goes. */
    record Stamp(String letterId, Instant letterAt, String replyTo) {
    }

    private static final byte[] NO_BODY = new byte[0];

    /**
     * The connector's dead-letter and copy headers: replaced on a replay, which is a delivery like the
     * first (a verified one gets a copy's headers of its own, an unverified one none).
     */
    private static final List<String> DEAD_LETTER_HEADERS = List.of(RabbitHeaders.OUTCOME, RabbitHeaders.REASON,
            RabbitHeaders.CONSUMER, RabbitHeaders.CHANNEL, RabbitHeaders.QUEUE, RabbitHeaders.ATTEMPTS,
            RabbitHeaders.ORIGINAL_EXCHANGE,
            RabbitHeaders.ORIGINAL_ROUTING_KEY, RabbitHeaders.DEAD_LETTER_ID, RabbitHeaders.DEAD_LETTERED_AT,
            RabbitHeaders.KEY_DIGEST, RabbitHeaders.DELIVERY_COUNT, RabbitHeaders.DEAD_LETTER_SIGNATURE,
            RabbitHeaders.RETRY_ATTEMPTS, RabbitHeaders.SIGNATURE, ConfirmingPublisher.SEQUENCE_HEADER,
            LETTER_AT, REPLY_TO, STAMP);

    /** Signs a verified letter's replay as the connector's copy, so that it keys as the original. */
    private final CopySignature copies;
    private final HeaderSignature stamps;
    private final HeaderSignature decisions;

    ReplayHeaders(CopySignature copies) {
        this.copies = copies;
        this.stamps = HeaderSignature.replayStamps(copies);
        this.decisions = HeaderSignature.replayDecisions(copies);
    }

    /**
     * {@return the headers of a replay of {@code letter}, stamped: its dead-letter headers, the
     * broker's {@code x-death} and its copy headers dropped, its replays counted; a verified letter's
     * a copy of the connector's, at its first attempt, naming its first exchange and routing key}
     *
     * @param queue   the channel's queue, where the replay goes
     * @param replyTo where the replay waits for the decision
     */
    Map<String, Object> copyOf(Map<String, Object> letterHeaders, DeadLetter letter, byte[] body, String queue,
                               String replyTo) {
        Map<String, Object> headers = new HashMap<>(letterHeaders);
        DEAD_LETTER_HEADERS.forEach(headers::remove);
        headers.keySet().removeIf(Redelivery::isDeathHeader);
        headers.put(RabbitHeaders.REPLAYS, letter.replays() + 1);
        if (letter.verified()) {
            // A copy of the connector's, as a retry copy is, at its first attempt: the consumer
            // believes its exchange and routing key, so the guard derives the original's key.
            headers.put(RabbitHeaders.RETRY_ATTEMPTS, 0);
            headers.put(RabbitHeaders.ORIGINAL_EXCHANGE, letter.exchange());
            headers.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, letter.routingKey());
            headers.put(RabbitHeaders.SIGNATURE, copies.sign(queue, 0, letter.exchange(), letter.routingKey(), body));
        }
        stamp(headers, letter.id(), letter.verified() ? letter.deadLetteredAt() : null, replyTo, queue, body);
        return headers;
    }

    /**
     * Stamps a copy's {@code headers}, for the channel's {@code queue}.
     *
     * @param letterAt when the letter was first dead-lettered, null when its time is not believed
     */
    private void stamp(Map<String, Object> headers, String letterId, Instant letterAt, String replyTo, String queue,
                       byte[] body) {
        headers.put(RabbitHeaders.REPLAY_OF, letterId);
        if (letterAt != null) {
            headers.put(LETTER_AT, letterAt.toEpochMilli());
        }
        headers.put(REPLY_TO, replyTo);
        headers.put(STAMP, stamps.sign(bound(headers, queue), body));
    }

    /** {@return the stamp of a copy this connector made for {@code queue}; empty when none, or not signed by it} */
    Optional<Stamp> stampOf(Map<String, Object> headers, byte[] body, String queue) {
        if (headers.get(STAMP) == null || !stamps.verify(bound(headers, queue), body, queue)) {
            return Optional.empty();
        }
        Long at = DeadLetterHeaders.number(headers, LETTER_AT);
        String replyTo = DeadLetterHeaders.nullable(headers, REPLY_TO);
        String id = DeadLetterHeaders.nullable(headers, RabbitHeaders.REPLAY_OF);
        return id == null || replyTo == null ? Optional.empty()
                : Optional.of(new Stamp(id, at == null ? null : Instant.ofEpochMilli(at), replyTo));
    }

    /** {@return the headers of the decision on the copy {@code stamp} marks, signed for its reply queue} */
    Map<String, Object> decision(Stamp stamp, ReplayResult.Status status, String detail) {
        Map<String, Object> h = new HashMap<>();
        h.put(RabbitHeaders.REPLAY_OF, stamp.letterId());
        h.put(STATUS, status.name());
        h.put(DETAIL, detail);
        h.put(DECISION_SIGNATURE, decisions.sign(bound(h, stamp.replyTo()), NO_BODY));
        return h;
    }

    /**
     * {@return the decision these headers carry, received on {@code replyQueue}; empty when not signed by
     * this connector}
     */
    Optional<ReplayResult> decisionOf(Map<String, Object> headers, String replyQueue) {
        if (!decisions.verify(bound(headers, replyQueue), NO_BODY, replyQueue)) {
            return Optional.empty();
        }
        String id = DeadLetterHeaders.nullable(headers, RabbitHeaders.REPLAY_OF);
        String status = DeadLetterHeaders.nullable(headers, STATUS);
        String detail = DeadLetterHeaders.nullable(headers, DETAIL);
        if (id == null || status == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(new ReplayResult(id, ReplayResult.Status.valueOf(status), detail == null ? "" : detail));
        } catch (IllegalArgumentException e) {
            // Signed by a version with a status this one does not know: not a decision it can report.
            return Optional.empty();
        }
    }

    /** The headers with the queue they are believed on, which the signature covers. */
    private static Map<String, Object> bound(Map<String, Object> headers, String queue) {
        Map<String, Object> b = new HashMap<>(headers);
        b.put(RabbitHeaders.QUEUE, queue);
        return b;
    }
}
