package dev.onceonly.internal.rabbitmq;

import dev.onceonly.internal.deadletter.DeadLetterAccess;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

import java.io.IOException;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One incoming channel: publishes the deliveries of its queue to Reactive Messaging on demand, and
 * owns the channel's lifecycle. Its parts, each apart:
 * <ul>
 *   <li>{@link ConsumingConnection}: the connection it consumes on, kept consuming;</li>
 *   <li>{@link PublishConnection}: the connection it publishes retry copies and dead letters on;</li>
 *   <li>{@link DeliveryEmitter}: the Reactive Streams side, handing each delivery over on demand,
 *       posted on the {@link Handover} first, so the guard of the method invoked with its payload
 *       keys on the real exchange and routing key, and its decision is handed to the delivery itself;</li>
 *   <li>{@link DeliverySettler}: the application's ack or nack, settled as the guard's decision
 *       says, through {@link Settlement} (ack, requeue, hold) and the settler's redelivery (retry
 *       copies, dead letters).</li>
 * </ul>
 *
 * <h2>Lifecycle</h2>
 * {@link #start()} connects (retrying until it works) once the application has started;
 * {@link #stopConsuming()} cancels the consumer and requeues what was not handed to the
 * application; {@link #drainAndClose()} waits up to the drain timeout for what was, requeues the
 * rest and closes.
 */
final class InboundChannel extends RabbitEndpoint implements Publisher<Message<?>> {

    private final IncomingSettings settings;
    private final Settlement settlement;
    private final DeliverySettler settler;
    private final DeliveryEmitter emitter;
    private final ConsumingConnection consuming;
    private final PublishConnection publishing;
    private int requeuedAtStop;
    private int inFlightAtStop;

    /**
     * @param tracing     the trace context of messages, resolved on the first delivery
     * @param deadLetters told of each dead letter the broker confirmed, resolved on the first one
     */
    InboundChannel(IncomingSettings settings, RabbitResources resources, Handover handover, Supplier<MessageTracing> tracing,
                   Supplier<DeadLetterListener> deadLetters) {
        super(settings.channel(), settings.connection(), resources);
        this.settings = settings;
        this.settlement = new Settlement(settings.retryDelay(), resources.scheduler(), handover);
        this.publishing = new PublishConnection(this, settings);
        CopySignature signature = CopySignature.of(settings);
        this.settler = new DeliverySettler(settings, settlement, publishing::publisher, signature,
                new DelayQueues(settings, publishing::connection, resources.nanoClock()), resources.jitter(),
                resources.clock(), deadLetters);
        this.consuming = new ConsumingConnection(this, settings, signature, tracing, this::received, settler::requeuesAreCounted);
        this.emitter = new DeliveryEmitter(settings.channel(), handover, resources, settings.claimAhead(), settings.batch(),
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
                        settler.nack(d, e);
                    }
                });
    }

    @Override
    public void subscribe(Subscriber<? super Message<?>> s) {
        emitter.subscribe(s);
    }

    /** A delivery from the broker: buffered until there is demand. */
    private void received(Delivery d) {
        settlement.track(d);
        if (stopping) {
            // It waited in amqp-client's dispatch queue while the consumer was being cancelled.
            settler.giveBack(d);
            return;
        }
        if (d.forgedCopy) {
            settler.forged(d);
            return;
        }
        emitter.offer(new IncomingRabbitMessage<>(d.payload, d, settler));
    }

    /** {@return deliveries received and not settled yet} */
    int unsettledCount() {
        return settlement.unsettledCount();
    }

    /** {@return deliveries in the claim-ahead line; 0 without claim-ahead} */
    int claimAheadLineLength() {
        return emitter.claimAheadLineLength();
    }

    /** Ready: both connections open and the consumer registered with the broker. */
    @Override
    boolean connected() {
        return consuming.consuming() && publishing.connected();
    }

    /** Both connections first, then the consumer: a delivery may need the publisher at once (a forged copy). */
    @Override
    void open() throws IOException, TimeoutException {
        consuming.open();
        publishing.open();
        consuming.consume();
        RetryBackoff b = settings.backoff();
        LogId.ONCE0501I.log(name(), settings.queue(), connection().describe(), settings.prefetch(), settings.maxAttempts(),
                Durations.format(b.first()), b.multiplier(), Durations.format(b.max()), Durations.format(b.brokerAbove()),
                settings.deadLetterExchange());
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
            consuming.cancel();
        }
        emitter.clear();
        requeuedAtStop = settlement.stopAndGiveBackWaiting(settler::giveBack);
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
        publishing.close();
        consuming.close();
    }

    /** {@return the channel's dead-letter queue, read on its publishing connection} */
    DeadLetterAccess deadLetters() {
        return DeadLetterEndpoint.of(settings, DeadLetterEndpoint.on(publishing::connection));
    }
}
