package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The deliveries that go back through a publish: copies for the next attempt, or for a later try
 * that is not an attempt (BUSY, RETRY on a queue where a requeue counts), each carrying the attempts
 * made so far, to the queue or, for a long delay, to a delay queue ({@link DelayQueues}); and dead
 * letters (with reason headers). Each is published with confirms and mandatory routing and the
 * original acked only once the broker confirmed the copy; a publish that fails leaves the original
 * requeued, so nothing is lost.
 */
final class Redelivery {

    private final IncomingSettings settings;
    private final Settlement settlement;
    /** The publisher of the current connection (a new one after each reconnection). */
    private final Supplier<ConfirmingPublisher> publisher;
    private final CopySignature signature;
    private final HeaderSignature deadLetterSignature;
    private final ReplayHeaders replays;
    private final DelayQueues delayQueues;
    private final BooleanSupplier requeueCounts;
    private final Clock clock;
    private final Supplier<DeadLetterListener> deadLetters;

    /**
     * @param requeueCounts whether a requeue raises the broker's delivery count (a quorum queue); may
     *                      change while running, when the connector finds out
     * @param clock         the wall time a dead letter is stamped with
     * @param deadLetters   told of each dead letter the broker confirmed
     */
    Redelivery(IncomingSettings settings, Settlement settlement, Supplier<ConfirmingPublisher> publisher,
               CopySignature signature, DelayQueues delayQueues, BooleanSupplier requeueCounts, Clock clock,
               Supplier<DeadLetterListener> deadLetters) {
        this.clock = clock;
        this.requeueCounts = requeueCounts;
        this.deadLetters = deadLetters;
        this.settings = settings;
        this.settlement = settlement;
        this.publisher = publisher;
        this.signature = signature;
        this.deadLetterSignature = HeaderSignature.deadLetters(signature);
        this.replays = new ReplayHeaders(signature);
        this.delayQueues = delayQueues;
    }

    /**
     * Delivers the message again as a copy that carries the attempts made so far: this one counted
     * ({@code countThisAttempt}, a failure) or not (BUSY, RETRY). The count then travels in the
     * message, whatever the queue type and whichever instance gets it next; the broker's own
     * {@code x-delivery-count} starts again at zero on the copy and counts only returns the
     * connector did not make (a consumer that died, a dropped connection).
     */
    void retry(Delivery d, boolean countThisAttempt) {
        publishCopy(d, countThisAttempt, settings.queue(), () -> { });
    }

    /**
     * At shutdown, where a requeue would spend an attempt (a quorum queue counts every return, a
     * closed channel's too): the delivery goes back as a copy that is not an attempt. A copy the
     * broker refuses is tried again after the retry delay; one still not confirmed at the drain
     * timeout is requeued then, which counts (as the deliveries still in progress then do).
     */
    void giveBack(Delivery d) {
        publishCopy(d, false, settings.queue(), () -> {
            settlement.giveBackLater(d, settings.retryDelay(), () -> giveBack(d));
            return true;
        });
    }

    /**
     * A failed delivery's next attempt, after {@code delay}: a copy through the delay queue when the
     * broker holds such a delay (the original is acked once the copy is confirmed, freeing its
     * prefetch slot at once), else the delivery is held here for {@code delay} and then copied to
     * the queue. A delay queue that cannot be declared leaves the delivery held here.
     */
    void retryAfter(Delivery d, Duration delay) {
        Optional<String> delayQueue = settings.backoff().brokerDelay(delay).flatMap(delayQueues::queueFor);
        if (delayQueue.isPresent()) {
            publishCopy(d, true, delayQueue.get(), () -> delayQueues.forget(delayQueue.get()));
        } else {
            settlement.hold(d, delay, () -> retry(d, true));
        }
    }

    private void publishCopy(Delivery d, boolean countThisAttempt, String routingKey, Runnable onFailed) {
        publishCopy(d, countThisAttempt, routingKey, () -> {
            onFailed.run();
            if (requeueCounts.getAsBoolean()) {
                // A requeue would spend one of the message's attempts on the broker's failure: the
                // copy is published again after the delay instead (to the queue: a delay queue the
                // publish failed on may be gone).
                settlement.hold(d, settings.retryDelay(), () -> publishCopy(d, countThisAttempt, settings.queue(), () -> { }));
                return true;
            }
            return false;
        });
    }

    /** @param onFailed as in {@link #publishThenAck} */
    private void publishCopy(Delivery d, boolean countThisAttempt, String routingKey, BooleanSupplier onFailed) {
        IncomingRabbitMetadata m = d.metadata;
        Map<String, Object> headers = copyHeaders(m);
        int attempts = countThisAttempt ? m.attempt() : m.attempt() - 1;
        headers.put(RabbitHeaders.RETRY_ATTEMPTS, attempts);
        headers.put(RabbitHeaders.ORIGINAL_EXCHANGE, m.exchange());
        headers.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, m.routingKey());
        headers.put(RabbitHeaders.SIGNATURE, signature.sign(settings.queue(), attempts, m.exchange(), m.routingKey(), m.body()));
        headers.remove(RabbitHeaders.DELIVERY_COUNT); // the broker's count, now carried in RETRY_ATTEMPTS
        // What the broker wrote when a delay queue returned this message: the count is in RETRY_ATTEMPTS,
        // and each copy starting without them keeps the headers from growing with every pass.
        headers.keySet().removeIf(Redelivery::isDeathHeader);
        publishThenAck(d, "retry", "", routingKey, headers, () -> { }, onFailed);
    }

    /**
     * Publishes the message to the dead-letter exchange with the reason, then acks it; once the
     * broker confirmed it, the line is logged and the listener told of it under {@code why}.
     */
    void deadLetter(Delivery d, Disposition disposition, DeadLetterListener.Reason why) {
        IncomingRabbitMetadata m = d.metadata;
        String consumer = disposition.consumer() != null ? disposition.consumer() : settings.channel();
        String keyDigest = disposition.keyDigest();
        Map<String, Object> headers = copyHeaders(m);
        // The count and the correlation header belong to this queue's retries, not to the dead letter.
        headers.remove(RabbitHeaders.RETRY_ATTEMPTS);
        headers.remove(RabbitHeaders.SIGNATURE);
        headers.remove(ConfirmingPublisher.SEQUENCE_HEADER);
        headers.put(RabbitHeaders.OUTCOME, disposition.outcome().name());
        headers.put(RabbitHeaders.REASON, disposition.reason());
        headers.put(RabbitHeaders.CONSUMER, consumer);
        headers.put(RabbitHeaders.CHANNEL, settings.channel());
        headers.put(RabbitHeaders.QUEUE, settings.queue());
        headers.put(RabbitHeaders.ATTEMPTS, m.attempt());
        headers.put(RabbitHeaders.ORIGINAL_EXCHANGE, m.exchange());
        headers.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, m.routingKey());
        // What the dead-letter operations name and date it by; the id is an identifier only, never
        // an input to a decision, so it may be random. (REPLAYS, from a replay, stays: it counts on.)
        headers.put(RabbitHeaders.DEAD_LETTER_ID, UUID.randomUUID().toString());
        // A replay dead-lettered again keeps its letter's first time, which the ledger purge's pin
        // keeps the key's row for; believed from this connector's stamp only (ReplayHeaders).
        headers.put(RabbitHeaders.DEAD_LETTERED_AT, replays.stampOf(m.headers(), m.body(), settings.queue())
                .map(ReplayHeaders.Stamp::letterAt).filter(Objects::nonNull).map(Instant::toEpochMilli)
                .orElseGet(clock::millis));
        // A producer's own x-onceonly-key-digest must not be signed as the connector's.
        headers.remove(RabbitHeaders.KEY_DIGEST);
        if (!keyDigest.isEmpty()) {
            headers.put(RabbitHeaders.KEY_DIGEST, keyDigest);
        }
        ReplayHeaders.STAMPED.forEach(headers::remove);
        // Last: what the dead-letter operations believe of these headers (issue 46).
        headers.put(RabbitHeaders.DEAD_LETTER_SIGNATURE, deadLetterSignature.sign(headers, m.body()));
        Object[] line = {settings.channel(), consumer, keyDigest.isEmpty() ? "-" : keyDigest, bodyHash(m.body()),
                disposition.outcome(), m.attempt(), settings.deadLetterExchange(), disposition.loggedReason()};
        publishThenAck(d, "dead-letter", settings.deadLetterExchange(), settings.deadLetterRoutingKey(), headers,
                () -> {
                    deadLetters.get().deadLettered(settings.channel(), why);
                    if (disposition.trace() == null) {
                        LogId.ONCE0505W.log(line);
                    } else {
                        LogId.ONCE0505W.logWithTrace(disposition.trace(), line);
                    }
                }, () -> {
                    // The decision stands: held and dead-lettered again after the delay, until the
                    // broker takes it. A requeue would hand the message to the handler again (a
                    // FAILED one at its last attempt, every delay, for as long as the exchange is
                    // broken) and, where a requeue counts, spend an attempt on the broker's failure.
                    settlement.hold(d, settings.retryDelay(), () -> deadLetter(d, disposition, why));
                    return true;
                });
    }

    private static Map<String, Object> copyHeaders(IncomingRabbitMetadata m) {
        return new HashMap<>(m.properties().getHeaders() == null ? Map.of() : m.properties().getHeaders());
    }

    /**
     * Publishes the message (unchanged but for {@code headers}) with confirms and mandatory routing,
     * then acks the original. If the publish fails, nothing is lost: {@code onFailed} holds the
     * original for another try and answers true, or the original is requeued after the retry delay.
     */
    private void publishThenAck(Delivery d, String what, String exchange, String routingKey,
                                Map<String, Object> headers, Runnable onConfirmed, BooleanSupplier onFailed) {
        if (d.isStale()) {
            // The broker took the delivery back when its channel closed and delivers it again: a copy
            // now would be a second one. (A channel that closes after this check, before the ack,
            // still leaves both: the window is the publish's round trip.)
            settlement.forget(d);
            return;
        }
        d.stage(Delivery.Stage.PUBLISHING);
        AMQP.BasicProperties props = d.metadata.properties().builder().headers(headers).build();
        publisher.get().publish(exchange, routingKey, true, props, d.metadata.body()).whenComplete((ok, failure) -> {
            if (failure == null) {
                onConfirmed.run();
                settlement.ack(d);
            } else {
                boolean heldForAnotherTry = onFailed.getAsBoolean();
                if (!heldForAnotherTry) {
                    settlement.holdThenRequeue(d);
                }
                LogId.ONCE0506W.log(what, settings.channel(), bodyHash(d.metadata.body()), describe(failure),
                        heldForAnotherTry ? "held and published again" : "requeued",
                        Durations.format(settings.retryDelay()));
            }
        });
    }

    private static String describe(Throwable e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    /** Short SHA-256 of a body: identifies a message in logs without revealing it. */
    static String bodyHash(byte[] body) {
        return DeadLetterEndpoint.sha256(body).substring(0, 16);
    }

    /**
     * Set by the broker when it dead-letters a message (here: a delay queue returning a retry copy):
     * {@code x-death} and the {@code x-first-death-*} and {@code x-last-death-*} summaries. Never
     * read: the attempt count is the connector's own, signed, header. Not carried to the next copy.
     */
    static boolean isDeathHeader(String name) {
        return name.equals("x-death") || name.startsWith("x-first-death-") || name.startsWith("x-last-death-");
    }
}
