package dev.onceonly.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.support.Durations;
import dev.onceonly.support.LogId;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One incoming channel: publishes the deliveries of its {@link QueueConsumer} to Reactive
 * Messaging on demand, and owns the channel's lifecycle. The broker actions live in
 * {@link Settlement} (ack, requeue, hold) and {@link Redelivery} (retry copies, dead letters);
 * {@link Disposition} chooses among them.
 *
 * <h2>Flow</h2>
 * Deliveries are handed downstream by the {@link DeliveryEmitter}, on demand, one at a time, each
 * posted on the {@link Handover} first, so the guard of the method invoked with its payload keys on
 * the real exchange and routing key, and its decision is handed to the {@link Delivery} itself.
 *
 * <h2>Settlement</h2>
 * The application's ack or nack settles the delivery as {@link Disposition} says from the guard's
 * decision:
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
 *
 * <h2>Lifecycle</h2>
 * {@link #start()} connects (retrying until it works) once the application has started;
 * {@link #stopConsuming()} cancels the consumer and requeues what was not handed to the
 * application; {@link #drainAndClose()} waits up to the drain timeout for what was, requeues the
 * rest and closes.
 */
final class InboundChannel extends RabbitEndpoint implements Publisher<Message<?>>, IncomingRabbitMessage.Settler {

    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    private final IncomingSettings settings;
    private final Handover handover;
    private final Supplier<MessageTracing> tracing;
    private final Settlement settlement;
    private final Redelivery redelivery;
    private final CopySignature signature;
    private final DeliveryEmitter emitter;
    /** Whether a requeue raises the broker's delivery count (quorum queues; also found out at runtime). */
    private volatile boolean requeueCounts;
    private volatile QueueConsumer consumer;
    private volatile Connection consumeConnection;
    private volatile Connection publishConnection;
    private volatile ConfirmingPublisher publisher;
    private int requeuedAtStop;
    private int inFlightAtStop;

    InboundChannel(IncomingSettings settings, RabbitResources resources, Handover handover, Supplier<MessageTracing> tracing) {
        super(settings.channel(), settings.connection(), resources);
        this.settings = settings;
        this.handover = handover;
        this.tracing = tracing;
        this.settlement = new Settlement(settings.retryDelay(), resources.scheduler(), handover);
        this.emitter = new DeliveryEmitter(settings.channel(), handover, resources.executor(), settings.claimAhead(),
                new DeliveryEmitter.Hooks() {
                    @Override
                    public boolean stopping() {
                        return stopping;
                    }

                    @Override
                    public void cancelled() {
                        stopConsuming();
                    }

                    @Override
                    public void forget(Delivery d) {
                        settlement.forget(d);
                    }

                    @Override
                    public void broken(Delivery d, RuntimeException e) {
                        nack(d, e);
                    }
                });
        this.signature = CopySignature.of(settings);
        this.redelivery = new Redelivery(settings, settlement, this::publisher, signature,
                new DelayQueues(settings, () -> publishConnection, resources.nanoClock()), () -> requeueCounts);
        this.requeueCounts = settings.queueType().requeueCounts();
    }

    // ---------------------------------------------------------------- Reactive Streams

    @Override
    public void subscribe(Subscriber<? super Message<?>> s) {
        emitter.subscribe(s);
    }

    /** A delivery from the broker: buffered until there is demand. */
    private void received(Delivery d) {
        settlement.track(d);
        if (stopping) {
            // It waited in amqp-client's dispatch queue while the consumer was being cancelled.
            giveBack(d);
            return;
        }
        if (d.forgedCopy) {
            redelivery.deadLetter(d, new Disposition(Disposition.Action.DEAD_LETTER, Outcome.REJECTED,
                    "x-onceonly-retry-attempts without this connector's signature: not a retry copy it made "
                            + "(forged, or signed with a key not in this instance's copy-signing-key or copy-signing-previous-keys)",
                    null, ""));
            return;
        }
        emitter.offer(new IncomingRabbitMessage<>(d.payload, d, this));
    }

    // ---------------------------------------------------------------- ack and nack

    /**
     * The application accepted the message: settled as the guard decided for it — acked, unless the
     * guarded method returned quietly after a refusal ({@link Delivery#settlesFromDecision}).
     */
    @Override
    public CompletionStage<Void> ack(Delivery d) {
        return settle(d, Disposition.accepted(d.guardDecision(), d.metadata.attempt(), settings.maxAttempts()));
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
            case RETRY_LATER -> redelivery.retryAfter(d,
                    settings.backoff().delay(d.metadata.attempt(), resources.jitter().getAsDouble()));
            case DEAD_LETTER -> redelivery.deadLetter(d, disposition);
        }
        return DONE;
    }

    /** {@return deliveries received and not settled yet} */
    int unsettledCount() {
        return settlement.unsettledCount();
    }

    /** {@return deliveries in the claim-ahead line; 0 without claim-ahead} */
    int claimAheadLineLength() {
        return emitter.claimAheadLineLength();
    }

    // ---------------------------------------------------------------- lifecycle

    /** Ready: both connections open and the consumer registered with the broker. */
    @Override
    boolean connected() {
        Connection consume = consumeConnection;
        Connection publish = publishConnection;
        QueueConsumer c = consumer;
        return consume != null && consume.isOpen() && publish != null && publish.isOpen() && c != null && c.isConsuming();
    }

    @Override
    void open() throws IOException, TimeoutException {
        ConnectionSettings c = connection();
        consumeConnection = resources.open(c, name(), "consume", this::consumeConnectionRecovered);
        publishConnection = resources.open(c, name(), "publish");
        publisher = new ConfirmingPublisher(publishConnection, resources.executor(), resources.scheduler(),
                settings.confirmTimeout());
        startConsumer();
        RetryBackoff b = settings.backoff();
        LogId.ONCE0501I.log(name(), settings.queue(), c.describe(), settings.prefetch(), settings.maxAttempts(),
                Durations.format(b.first()), b.multiplier(), Durations.format(b.max()), Durations.format(b.brokerAbove()),
                settings.deadLetterExchange());
    }

    /**
     * Opens the consuming AMQP channel: topology, prefetch, consumer. One AMQP channel, hence one
     * delivery at a time: parallelism comes from Reactive Messaging's "concurrency" attribute, which
     * makes copies of the channel (and so of this object). Runs under {@link #lifecycle}.
     */
    private void startConsumer() throws IOException {
        Channel ch = consumeConnection.createChannel();
        try {
            if (settings.declare()) {
                ch = Topology.declare(consumeConnection, ch, settings);
            }
            ch.basicQos(settings.prefetch());
            QueueConsumer c = new QueueConsumer(ch, settings, signature, tracing, this::received, this::consumerLost,
                    this::requeuesAreCounted);
            ch.basicConsume(settings.queue(), false, "onceonly:" + name(), c);
            consumer = c;
        } catch (IOException | RuntimeException e) {
            Connections.closeQuietly(ch);
            throw e;
        }
    }

    /**
     * The broker closed the consuming AMQP channel while its connection stayed open (a 406 such as an
     * ack timeout, a failed declaration) or cancelled the consumer (queue deleted). amqp-client
     * recovers connections, not such channels: without this the channel would never consume again.
     */
    private void consumerLost(String why) {
        if (stopping) {
            return;
        }
        LogId.ONCE0512W.log(name(), why, Durations.format(connection().recoveryInterval()));
        scheduleReconsume();
    }

    /**
     * amqp-client recovered the consuming connection. Its topology recovery redeclares the queues
     * and then the consumer on the recovered AMQP channel; when a declaration fails there (a
     * queue whose node is down in a cluster: 404), the broker closes that channel and the consumer
     * is never recovered, with no shutdown signal to this consumer. Before, the channel then never
     * consumed again. Checked after the recovery interval, when a recovered consumer has had its
     * consume-ok.
     */
    private void consumeConnectionRecovered() {
        try {
            resources.scheduler().schedule(() -> {
                QueueConsumer c = consumer;
                if (!stopping && (c == null || !c.isConsuming())) {
                    LogId.ONCE0512W.log(name(), "the consumer was not recovered with its connection",
                            Durations.format(connection().recoveryInterval()));
                    scheduleReconsume();
                }
            }, connection().recoveryInterval().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // Shutting down.
        }
    }

    private void scheduleReconsume() {
        try {
            resources.scheduler().schedule(this::reconsume, connection().recoveryInterval().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // Shutting down.
        }
    }

    private void reconsume() {
        synchronized (lifecycle) {
            if (stopping || consumer != null && consumer.isConsuming()) {
                return;
            }
            Connection c = consumeConnection;
            if (c == null || !c.isOpen()) {
                scheduleReconsume(); // the connection is recovering; try again after it
                return;
            }
            try {
                startConsumer();
                LogId.ONCE0513I.log(name(), settings.queue());
            } catch (IOException | RuntimeException e) {
                LogId.ONCE0512W.log(name(), Connections.describe(e), Durations.format(connection().recoveryInterval()));
                scheduleReconsume();
            }
        }
    }

    /**
     * The queue is configured as classic but counts requeues (a quorum queue): BUSY and RETRY from
     * now on come back as uncounted copies, so they never reach the broker's delivery limit.
     */
    private void requeuesAreCounted() {
        if (!requeueCounts) {
            requeueCounts = true;
            LogId.ONCE0514W.log(name(), settings.queue());
        }
    }

    /**
     * The publisher for retry copies and dead letters. The broker closes its AMQP channel on a
     * channel-level error (a dead-letter exchange that does not exist: 404), which amqp-client does
     * not recover; a new one is opened on the next publish while the connection is up.
     */
    private ConfirmingPublisher publisher() {
        ConfirmingPublisher p = publisher;
        Connection c = publishConnection;
        if (p != null && !p.isOpen() && c != null && c.isOpen()) {
            synchronized (lifecycle) {
                if (publisher == p && !stopping) {
                    try {
                        publisher = new ConfirmingPublisher(c, resources.executor(), resources.scheduler(), settings.confirmTimeout());
                    } catch (IOException | RuntimeException e) {
                        // Stays closed: the publish fails and the delivery is requeued, nothing is lost.
                    }
                }
                p = publisher;
            }
        }
        return p;
    }

    /**
     * Cancels the consumer and gives back what the application was not handed (buffered
     * deliveries and held retries): requeued, or on a queue where a requeue counts as an attempt,
     * published again as a copy that does not (acked once confirmed; {@link #drainAndClose} waits for
     * the confirms with the deliveries in progress). Idempotent.
     */
    void stopConsuming() {
        synchronized (lifecycle) {
            if (stopping) {
                return;
            }
            stopping = true;
            QueueConsumer c = consumer;
            try {
                if (c != null && c.getConsumerTag() != null && c.getChannel().isOpen()) {
                    c.getChannel().basicCancel(c.getConsumerTag());
                }
            } catch (IOException | RuntimeException e) {
                // The channel is closing anyway; its unacked deliveries go back to the queue.
            }
        }
        emitter.clear();
        requeuedAtStop = settlement.stopAndGiveBackWaiting(this::giveBack);
        inFlightAtStop = settlement.unsettledCount();
    }

    /** A delivery not handed to the application goes back at a stop: requeued, or copied where a requeue counts. */
    private void giveBack(Delivery d) {
        if (requeueCounts) {
            redelivery.giveBack(d);
        } else {
            settlement.requeue(d);
        }
    }

    /**
     * After {@link #stopConsuming()}: waits up to the drain timeout for deliveries the application
     * is processing (or the connector is publishing), requeues whatever is left and closes the
     * connections.
     */
    void drainAndClose() {
        awaitQuietly(settlement::allSettled, settings.drainTimeout());
        int timedOut = settlement.requeueAll();
        synchronized (lifecycle) {
            close();
        }
        LogId.ONCE0507I.log(name(), requeuedAtStop, Math.max(0, inFlightAtStop - timedOut), timedOut);
    }

    @Override
    void close() {
        ConfirmingPublisher p = publisher;
        if (p != null) {
            p.close();
        }
        Connections.closeQuietly(consumeConnection);
        Connections.closeQuietly(publishConnection);
    }
}
