package dev.onceonly.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.Handover;
import dev.onceonly.support.Durations;
import dev.onceonly.support.LogId;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.io.IOException;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One incoming channel: publishes the deliveries of its {@link QueueConsumer} to Reactive
 * Messaging on demand, and owns the channel's lifecycle. The broker actions live in
 * {@link Settlement} (ack, requeue, hold) and {@link Redelivery} (retry copies, dead letters);
 * {@link Disposition} chooses among them.
 *
 * <h2>Flow</h2>
 * Deliveries are buffered (at most prefetch: the broker sends no more) and handed downstream only
 * on demand, one at a time. Before a delivery is handed over, it is posted on the {@link Handover}
 * under its payload object, so the guard of the method invoked with that payload keys on the real
 * exchange and routing key and reports its decision to the {@link Delivery} itself.
 *
 * <h2>Settlement</h2>
 * <ul>
 *   <li>ack: {@code basicAck}.</li>
 *   <li>nack: {@link Disposition#of} from the guard's decision. BUSY and RETRY are held for the retry
 *       delay, then requeued (on quorum queues, where a requeue counts, as an uncounted copy).
 *       FAILED below max attempts is held, then delivered again as a counted copy
 *       ({@link Redelivery#retry}). FAILED at max attempts, CONFLICT and REJECTED are
 *       dead-lettered ({@link Redelivery#deadLetter}).</li>
 *   <li>Held deliveries keep their prefetch slot: a burst of retries slows the consumer down instead
 *       of spinning through the queue.</li>
 * </ul>
 *
 * <h2>Lifecycle</h2>
 * {@link #start()} connects (retrying until it works) once the application has started;
 * {@link #stopConsuming()} cancels the consumer and requeues what was not handed to the
 * application; {@link #drainAndClose()} waits up to the drain timeout for what was, requeues the
 * rest and closes.
 */
final class InboundChannel extends RabbitEndpoint implements Publisher<Message<?>> {

    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    private final IncomingSettings settings;
    private final Handover handover;
    private final Settlement settlement;
    private final Redelivery redelivery;
    private final CopySignature signature;
    private final Queue<IncomingRabbitMessage<Object>> buffered = new ConcurrentLinkedQueue<>();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicInteger emitting = new AtomicInteger();
    private volatile Subscriber<? super Message<?>> subscriber;
    private volatile QueueConsumer consumer;
    private volatile Connection consumeConnection;
    private volatile Connection publishConnection;
    private volatile ConfirmingPublisher publisher;
    private int requeuedAtStop;
    private int inFlightAtStop;

    InboundChannel(IncomingSettings settings, RabbitResources resources, Handover handover) {
        super(settings.channel(), settings.connection(), resources);
        this.settings = settings;
        this.handover = handover;
        this.settlement = new Settlement(settings.retryDelay(), resources.scheduler(), handover);
        this.signature = settings.copySigningKey() != null ? CopySignature.withKey(settings.copySigningKey())
                : CopySignature.derived(settings.connection(), settings.queue());
        this.redelivery = new Redelivery(settings, settlement, () -> publisher, signature);
    }

    // ---------------------------------------------------------------- Reactive Streams

    @Override
    public void subscribe(Subscriber<? super Message<?>> s) {
        synchronized (lifecycle) {
            if (subscriber != null) {
                s.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                    }

                    @Override
                    public void cancel() {
                    }
                });
                s.onError(new IllegalStateException("channel '" + name() + "' accepts a single subscriber"));
                return;
            }
            subscriber = s;
        }
        s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                if (n <= 0) {
                    s.onError(new IllegalArgumentException("request must be positive (rule 3.9)"));
                    return;
                }
                requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
                emit();
            }

            @Override
            public void cancel() {
                // Nobody will process further deliveries here: let other consumers have them.
                stopConsuming();
            }
        });
    }

    /** A delivery from the broker: buffered until there is demand. */
    private void received(Delivery d) {
        settlement.track(d);
        if (stopping) {
            // It waited in amqp-client's dispatch queue while the consumer was being cancelled.
            settlement.requeue(d);
            return;
        }
        if (d.forgedCopy) {
            redelivery.deadLetter(d, new Disposition(Disposition.Action.DEAD_LETTER, Outcome.REJECTED,
                    "x-onceonly-retry-attempts without this connector's signature: not a retry copy it made "
                            + "(forged, or instances with different copy-signing-key)", null, ""));
            return;
        }
        buffered.offer(new IncomingRabbitMessage<>(d.payload, d, this));
        emit();
    }

    /** Emits buffered deliveries while there is demand; one thread at a time, never re-entrant. */
    private void emit() {
        if (emitting.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            long wanted = requested.get();
            long sent = 0;
            while (sent != wanted && !stopping) {
                IncomingRabbitMessage<Object> m = buffered.poll();
                if (m == null) {
                    break;
                }
                Delivery d = m.delivery();
                if (d.isStale()) {
                    settlement.forget(d); // the broker requeued it when its channel closed: someone gets it again
                    continue;
                }
                d.stage = Delivery.Stage.PROCESSING;
                // Withdrawn when the delivery is settled, so the board holds only deliveries in flight.
                handover.post(d.payload, d);
                try {
                    subscriber.onNext(m);
                } catch (RuntimeException e) {
                    // Reactive Messaging handles method failures itself; this is a broken subscriber.
                    nack(d, e);
                }
                sent++;
            }
            if (sent != 0 && wanted != Long.MAX_VALUE) {
                requested.addAndGet(-sent);
            }
            missed = emitting.addAndGet(-missed);
        } while (missed != 0);
    }

    // ---------------------------------------------------------------- ack and nack

    /** The application accepted the message (processed, or a duplicate the guard skipped). */
    CompletionStage<Void> ack(Delivery d) {
        if (d.decide()) {
            settlement.ack(d);
        }
        return DONE;
    }

    /**
     * The application did not accept the message. Completes at once: the broker action happens
     * later (after the retry delay, or after the dead-letter publish is confirmed), while the
     * delivery keeps its prefetch slot.
     */
    CompletionStage<Void> nack(Delivery d, Throwable reason) {
        if (!d.decide()) {
            return DONE;
        }
        Disposition disposition = Disposition.of(d.guardDecision(), reason, d.metadata.attempt(), settings.maxAttempts());
        switch (disposition.action()) {
            case REQUEUE_LATER -> {
                if (settings.queueType().requeueCounts()) {
                    // A requeue would spend an attempt (and on RabbitMQ 4 count towards the delivery limit).
                    settlement.hold(d, () -> redelivery.retry(d, false));
                } else {
                    settlement.holdThenRequeue(d);
                }
            }
            case RETRY_LATER -> settlement.hold(d, () -> redelivery.retry(d, true));
            case DEAD_LETTER -> redelivery.deadLetter(d, disposition);
        }
        return DONE;
    }

    // ---------------------------------------------------------------- lifecycle

    @Override
    boolean connected() {
        Connection consume = consumeConnection;
        Connection publish = publishConnection;
        return consume != null && consume.isOpen() && publish != null && publish.isOpen();
    }

    @Override
    void open() throws IOException, TimeoutException {
        ConnectionSettings c = connection();
        consumeConnection = Connections.open(c, "onceonly:" + name() + ":consume", resources);
        publishConnection = Connections.open(c, "onceonly:" + name() + ":publish", resources);
        publisher = new ConfirmingPublisher(publishConnection, resources.executor(), resources.scheduler(),
                settings.confirmTimeout());
        // One AMQP channel, hence one delivery at a time: parallelism comes from Reactive Messaging's
        // "concurrency" attribute, which makes copies of the channel (and so of this object).
        Channel ch = consumeConnection.createChannel();
        if (settings.declare()) {
            ch = declareTopology(ch);
        }
        ch.basicQos(settings.prefetch());
        consumer = new QueueConsumer(ch, settings, signature, this::received);
        ch.basicConsume(settings.queue(), false, "onceonly:" + name(), consumer);
        LogId.ONCE0501I.log(name(), settings.queue(), c.describe(), settings.prefetch(), settings.maxAttempts(),
                Durations.format(settings.retryDelay()), settings.deadLetterExchange());
    }

    /** @return the channel to consume on (a new one when the queue declaration was refused and closed the first) */
    private Channel declareTopology(Channel ch) throws IOException {
        ch = declareQueue(ch);
        if (!settings.exchange().isEmpty()) {
            ch.exchangeDeclare(settings.exchange(), settings.exchangeType(), true);
            for (String key : settings.routingKeys()) {
                ch.queueBind(settings.queue(), settings.exchange(), key);
            }
        }
        ch.exchangeDeclare(settings.deadLetterExchange(), settings.deadLetterExchangeType(), true);
        ch.queueDeclare(settings.deadLetterQueue(), true, false, false, null);
        ch.queueBind(settings.deadLetterQueue(), settings.deadLetterExchange(), settings.deadLetterRoutingKey());
        return ch;
    }

    /**
     * Declares the queue. A quorum queue gets an explicit delivery limit and dead-letter target, so
     * that the broker's own limit (which counts only returns the connector did not make: crashed
     * consumers, dropped connections) lands in the dead-letter queue instead of dropping the
     * message (RabbitMQ 4.0 drops at 20 by default). A queue that already exists with other
     * arguments is used as it is, with a warning: redeclaring it would need deleting it.
     */
    private Channel declareQueue(Channel ch) throws IOException {
        if (settings.queueType() != QueueType.QUORUM) {
            ch.queueDeclare(settings.queue(), true, false, false, null);
            return ch;
        }
        Map<String, Object> args = Map.of("x-queue-type", "quorum", "x-delivery-limit", settings.deliveryLimit(),
                "x-dead-letter-exchange", settings.deadLetterExchange(),
                "x-dead-letter-routing-key", settings.deadLetterRoutingKey());
        try {
            ch.queueDeclare(settings.queue(), true, false, false, args);
            return ch;
        } catch (IOException e) {
            if (!(e.getCause() instanceof ShutdownSignalException sig) || !sig.getMessage().contains("PRECONDITION_FAILED")) {
                throw e;
            }
            LogId.ONCE0511W.log(name(), settings.queue(), settings.deliveryLimit(), settings.deadLetterExchange());
            Channel again = consumeConnection.createChannel();
            again.queueDeclarePassive(settings.queue());
            return again;
        }
    }

    /**
     * Cancels the consumer and gives back what the application was not handed (buffered
     * deliveries and held retries). Idempotent.
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
        buffered.clear();
        requeuedAtStop = settlement.stopAndRequeueWaiting();
        inFlightAtStop = settlement.unsettledCount();
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
