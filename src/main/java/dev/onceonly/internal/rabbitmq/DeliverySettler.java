package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;
import dev.onceonly.rabbitmq.RabbitHeaders;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * How one incoming channel settles its deliveries. The application's ack or nack becomes a
 * {@link Disposition} from the guard's decision, which {@link Settlement} (ack, requeue, hold) or
 * {@link Redelivery} (retry copies, dead letters) carries out:
 * <ul>
 *   <li>PROCESSED, DUPLICATE, or no guard: {@code basicAck} on an ack.</li>
 *   <li>BUSY and RETRY (acked or nacked) are held for the retry
 *       delay, then requeued (on quorum queues, where a requeue counts, as an uncounted copy).
 *       FAILED below max attempts waits out its backoff ({@link RetryBackoff}), then is delivered
 *       again as a counted copy ({@link Redelivery#retryAfter}). FAILED at max attempts, CONFLICT
 *       and REJECTED are dead-lettered ({@link Redelivery#deadLetter}).</li>
 *   <li>Held deliveries keep their prefetch slot: a burst of short retries slows the consumer down
 *       instead of spinning through the queue. A backoff longer than {@code retry-broker-delay-above}
 *       is not held: the copy waits in a delay queue ({@link DelayQueues}) and the original is acked,
 *       so failing messages do not stall the others for minutes.</li>
 * </ul>
 * Also how a delivery goes back without reaching the application (at a stop, or a forged retry
 * copy), and whether a requeue counts as an attempt on the channel's queue.
 */
final class DeliverySettler implements IncomingRabbitMessage.Settler {

    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    private final IncomingSettings settings;
    private final Settlement settlement;
    private final Redelivery redelivery;
    private final DoubleSupplier jitter;
    private final ReplayHeaders replays;
    private final Supplier<ConfirmingPublisher> publisher;
    /** Whether a requeue raises the broker's delivery count (quorum queues; also found out at runtime). */
    private volatile boolean requeueCounts;

    /**
     * @param publisher   the publisher for retry copies and dead letters, of the current connection
     * @param jitter      the random factor of each backoff
     * @param clock       the wall time dead letters are stamped with
     * @param deadLetters told of each dead letter the broker confirmed
     */
    DeliverySettler(IncomingSettings settings, Settlement settlement, Supplier<ConfirmingPublisher> publisher,
                    CopySignature signature, DelayQueues delayQueues, DoubleSupplier jitter, Clock clock,
                    Supplier<DeadLetterListener> deadLetters) {
        this.settings = settings;
        this.settlement = settlement;
        this.jitter = jitter;
        this.replays = new ReplayHeaders(signature);
        this.publisher = publisher;
        this.redelivery = new Redelivery(settings, settlement, publisher, signature, delayQueues, () -> requeueCounts, clock,
                deadLetters);
        this.requeueCounts = settings.queueType().requeueCounts();
    }

    /**
     * The application accepted the message: settled as the guard decided for it — acked, unless the
     * guarded method returned quietly after a refusal or a failure ({@link Delivery#settlesFromDecision}).
     */
    @Override
    public CompletionStage<Void> ack(Delivery d) {
        return settle(d, Disposition.accepted(d.guardDecision(), d.guardFailure(), d.metadata.attempt(), settings.maxAttempts()));
    }

    /** The application did not accept the message: settled as the guard's decision and the failure say. */
    @Override
    public CompletionStage<Void> nack(Delivery d, Throwable reason) {
        return settle(d, Disposition.of(d.guardDecision(), reason, d.metadata.attempt(), settings.maxAttempts()));
    }

    /**
     * The first ack or nack of the application settles the delivery. Completes at once: the broker
     * action may happen later (after the retry delay, or after the dead-letter publish is confirmed),
     * while the delivery keeps its prefetch slot.
     */
    private CompletionStage<Void> settle(Delivery d, Disposition disposition) {
        if (!d.decide()) {
            return DONE;
        }
        switch (disposition.action()) {
            case ACK -> settlement.ack(d);
            case REQUEUE_LATER -> {
                if (requeueCounts) {
                    // A requeue would spend an attempt (and on RabbitMQ 4 count towards the delivery limit).
                    settlement.hold(d, settings.retryDelay(), () -> redelivery.retry(d, false));
                } else {
                    settlement.holdThenRequeue(d);
                }
            }
            case RETRY_LATER -> {
                Duration delay = settings.backoff().delay(d.metadata.attempt(), jitter.getAsDouble());
                // The one line of a failed attempt that is tried again; the last one is the dead letter's.
                LogId.ONCE0516W.log(disposition.consumer() != null ? disposition.consumer() : settings.channel(),
                        d.metadata.attempt(), settings.maxAttempts(), settings.channel(),
                        disposition.keyDigest().isEmpty() ? "-" : disposition.keyDigest(), Redelivery.bodyHash(d.metadata.body()),
                        disposition.loggedReason(), Durations.format(delay));
                redelivery.retryAfter(d, delay);
            }
            case DEAD_LETTER -> redelivery.deadLetter(d, disposition, disposition.deadLetterReason());
        }
        Object replayOf = d.metadata.headers().get(RabbitHeaders.REPLAY_OF);
        if (replayOf != null) {
            ReplayReport.settled(replayOf.toString(), settings.channel(), disposition)
                    .ifPresent(decided -> tellTheReplay(d, decided));
        }
        return DONE;
    }

    /**
     * Sends the decision on a replay's copy to the replay that waits for it, on whichever instance
     * (its stamp names where), after the broker action on the copy began. A copy without this
     * connector's stamp (forged, or replayed by an earlier version) tells nobody. Lost, the decision
     * leaves the dead letter in its queue, and a replay of it again is a duplicate.
     */
    private void tellTheReplay(Delivery d, ReplayResult decided) {
        replays.stampOf(d.metadata.headers(), d.metadata.body(), settings.queue()).ifPresent(stamp -> {
            AMQP.BasicProperties props = new AMQP.BasicProperties.Builder()
                    .headers(replays.decision(stamp, decided.status(), decided.detail())).build();
            try {
                publisher.get().publish("", stamp.replyTo(), false, props, new byte[0]).whenComplete((ok, failure) -> {
                    if (failure != null) {
                        LogId.ONCE0806W.log(stamp.letterId(), settings.channel(), failure instanceof Exception e
                                ? Connections.describe(e) : failure.getClass().getName());
                    }
                });
            } catch (RuntimeException e) {
                LogId.ONCE0806W.log(stamp.letterId(), settings.channel(), Connections.describe(e));
            }
        });
    }

    /** A delivery that claims to be a retry copy without this connector's signature: dead-lettered, never handed over. */
    void forged(Delivery d) {
        redelivery.deadLetter(d, new Disposition(Disposition.Action.DEAD_LETTER, Outcome.REJECTED,
                "x-onceonly-retry-attempts without this connector's signature: not a retry copy it made "
                        + "(forged, or signed with a key not in this instance's copy-signing-key or copy-signing-previous-keys)",
                null, ""), DeadLetterListener.Reason.UNSIGNED_COPY);
    }

    /** A delivery not handed to the application goes back at a stop: requeued, or copied where a requeue counts. */
    void giveBack(Delivery d) {
        if (requeueCounts) {
            redelivery.giveBack(d);
        } else {
            settlement.requeue(d);
        }
    }

    /**
     * The queue is configured as classic but counts requeues (a quorum queue): BUSY and RETRY from
     * now on come back as uncounted copies, so they never reach the broker's delivery limit.
     */
    void requeuesAreCounted() {
        if (!requeueCounts) {
            requeueCounts = true;
            LogId.ONCE0514W.log(settings.channel(), settings.queue());
        }
    }
}
