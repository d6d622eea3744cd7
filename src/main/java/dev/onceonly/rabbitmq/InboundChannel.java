package dev.onceonly.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Outcome;
import dev.onceonly.engine.CurrentMessage;
import dev.onceonly.engine.Durations;
import dev.onceonly.engine.LogId;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One incoming channel: consumes a queue and publishes its deliveries to Reactive Messaging, and
 * turns the application's ack or nack into the broker action of DESIGN.md.
 *
 * <h2>Flow</h2>
 * Deliveries are buffered (at most prefetch: the broker sends no more) and handed
 * downstream only on demand. They are emitted on the thread that delivered them or that signalled
 * demand, one at a time, with {@link CurrentMessage} set: a synchronous consumer method runs inside
 * that emission, so the guard sees the real exchange and routing key even when the method takes
 * only the payload.
 *
 * <h2>Settlement</h2>
 * <ul>
 *   <li>ack: {@code basicAck}.</li>
 *   <li>nack: {@link Disposition#of}. BUSY and RETRY are held for the retry delay, then requeued.
 *       FAILED below max attempts is held, then delivered again as the next attempt: on quorum
 *       queues by a requeue (the broker counts it in {@code x-delivery-count}), on classic queues by
 *       publishing a copy to the queue with {@link RabbitHeaders#RETRY_ATTEMPTS} and acking the
 *       original once the copy is confirmed (classic queues count nothing). FAILED at max attempts,
 *       CONFLICT and REJECTED are published to the dead-letter exchange with reason headers and
 *       acked once that publish is confirmed. A publish that fails leaves the message requeued.</li>
 *   <li>Held deliveries keep their prefetch slot: a burst of retries slows the consumer down instead
 *       of spinning through the queue.</li>
 * </ul>
 *
 * <h2>Lifecycle</h2>
 * {@link #start()} connects (retrying until it works) once the application has started;
 * {@link #stopConsuming()} cancels the consumers and requeues what was not handed to the
 * application; {@link #drainAndClose()} waits up to the drain timeout for what was, requeues the
 * rest and closes.
 */
final class InboundChannel extends RabbitEndpoint implements Publisher<Message<?>> {

    /** The delivery being emitted on this thread, for guard events raised inside the emission. */
    private static final ThreadLocal<Delivery> DISPATCHING = new ThreadLocal<>();
    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    private final IncomingSettings settings;
    private final Queue<IncomingRabbitMessage<Object>> buffered = new ConcurrentLinkedQueue<>();
    private final Set<Delivery> unsettled = ConcurrentHashMap.newKeySet();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicInteger emitting = new AtomicInteger();
    private QueueConsumer consumer;
    private volatile Subscriber<? super Message<?>> subscriber;
    private final AtomicInteger requeuedAtStop = new AtomicInteger();
    private volatile int inFlightAtStop;
    private volatile Connection consumeConnection;
    private volatile Connection publishConnection;
    private volatile ConfirmingPublisher publisher;

    InboundChannel(IncomingSettings settings, RabbitResources resources) {
        super(settings.channel(), settings.connection(), resources);
        this.settings = settings;
    }

    /** Records the guard's decision on the delivery being emitted on this thread, if any. */
    static void guardDecided(GuardEvent event) {
        Delivery d = DISPATCHING.get();
        if (d != null) {
            d.guardEvent = event;
        }
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
                    forget(d); // the broker requeued it when its channel closed: someone gets it again
                    continue;
                }
                d.stage = Delivery.Stage.PROCESSING;
                DISPATCHING.set(d);
                try (CurrentMessage.Scope ignored = CurrentMessage.enter(d.metadata)) {
                    subscriber.onNext(m);
                } catch (RuntimeException e) {
                    // Reactive Messaging handles method failures itself; this is a broken subscriber.
                    nack(d, e);
                } finally {
                    DISPATCHING.remove();
                }
                sent++;
            }
            if (sent != 0 && wanted != Long.MAX_VALUE) {
                requested.addAndGet(-sent);
            }
            missed = emitting.addAndGet(-missed);
        } while (missed != 0);
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
            declareTopology(ch);
        }
        ch.basicQos(settings.prefetch());
        consumer = new QueueConsumer(ch);
        ch.basicConsume(settings.queue(), false, "onceonly:" + name(), consumer);
        LogId.ONCE0501I.log(name(), settings.queue(), c.describe(), settings.prefetch(), settings.maxAttempts(),
                Durations.format(settings.retryDelay()), settings.deadLetterExchange());
    }

    private void declareTopology(Channel ch) throws IOException {
        Map<String, Object> queueArgs = settings.queueType() == QueueType.QUORUM ? Map.of("x-queue-type", "quorum") : null;
        ch.queueDeclare(settings.queue(), true, false, false, queueArgs);
        if (!settings.exchange().isEmpty()) {
            ch.exchangeDeclare(settings.exchange(), settings.exchangeType(), true);
            for (String key : settings.routingKeys()) {
                ch.queueBind(settings.queue(), settings.exchange(), key);
            }
        }
        ch.exchangeDeclare(settings.deadLetterExchange(), settings.deadLetterExchangeType(), true);
        ch.queueDeclare(settings.deadLetterQueue(), true, false, false, null);
        ch.queueBind(settings.deadLetterQueue(), settings.deadLetterExchange(), settings.deadLetterRoutingKey());
    }

    /**
     * Cancels the consumers and gives back what the application was not handed (buffered
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
        for (Delivery d : unsettled) {
            Delivery.Stage s = d.stage;
            if ((s == Delivery.Stage.BUFFERED || s == Delivery.Stage.HELD) && requeue(d)) {
                requeuedAtStop.incrementAndGet();
            }
        }
        inFlightAtStop = unsettled.size();
    }

    /**
     * After {@link #stopConsuming()}: waits up to the drain timeout for deliveries the application
     * is processing (or the connector is publishing), requeues whatever is left and closes the
     * connections.
     */
    void drainAndClose() {
        awaitQuietly(unsettled::isEmpty, settings.drainTimeout());
        int timedOut = 0;
        for (Delivery d : unsettled) {
            if (requeue(d)) {
                timedOut++;
            }
        }
        synchronized (lifecycle) {
            close();
        }
        LogId.ONCE0507I.log(name(), requeuedAtStop.get(), Math.max(0, inFlightAtStop - timedOut), timedOut);
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

    // ---------------------------------------------------------------- deliveries

    /** Consumes the queue on one AMQP channel. */
    private final class QueueConsumer extends DefaultConsumer {
        private final Delivery.ChannelGeneration generation = new Delivery.ChannelGeneration();

        QueueConsumer(Channel channel) {
            super(channel);
        }

        @Override
        public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
            Map<String, Object> headers = properties.getHeaders() == null ? Map.of() : properties.getHeaders();
            int retries = intHeader(headers, RabbitHeaders.RETRY_ATTEMPTS);
            int returned = intHeader(headers, RabbitHeaders.DELIVERY_COUNT);
            // A retry copy came through the default exchange; the original's exchange and routing
            // key keep its content key stable across attempts.
            boolean retryCopy = headers.containsKey(RabbitHeaders.RETRY_ATTEMPTS) && envelope.getExchange().isEmpty();
            String exchange = retryCopy ? stringHeader(headers, RabbitHeaders.ORIGINAL_EXCHANGE, envelope.getExchange()) : envelope.getExchange();
            String routingKey = retryCopy ? stringHeader(headers, RabbitHeaders.ORIGINAL_ROUTING_KEY, envelope.getRoutingKey()) : envelope.getRoutingKey();
            IncomingRabbitMetadata metadata = new IncomingRabbitMetadata(name(), settings.queue(), exchange, routingKey,
                    envelope.isRedeliver(), envelope.getDeliveryTag(), properties, body, 1 + retries + returned);
            Delivery d = new Delivery(getChannel(), metadata, generation);
            unsettled.add(d);
            if (stopping) {
                // It waited in amqp-client's dispatch queue while the consumer was being cancelled.
                if (requeue(d)) {
                    requeuedAtStop.incrementAndGet();
                }
                return;
            }
            buffered.offer(new IncomingRabbitMessage<>(settings.payloadType().of(body), d, InboundChannel.this));
            emit();
        }

        @Override
        public void handleShutdownSignal(String consumerTag, ShutdownSignalException sig) {
            generation.next();
        }

        @Override
        public void handleCancel(String consumerTag) {
            LogId.ONCE0509W.log(name(), consumerTag, settings.queue());
        }
    }

    /** The application accepted the message (processed, or a duplicate the guard skipped). */
    CompletionStage<Void> ack(Delivery d) {
        if (d.decide()) {
            settleAck(d);
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
        Disposition disposition = Disposition.of(reason, d.metadata.attempt(), settings.maxAttempts());
        switch (disposition.action()) {
            case REQUEUE_LATER -> holdThenRequeue(d);
            case RETRY_LATER -> {
                if (settings.queueType().brokerCountsDeliveries()) {
                    holdThenRequeue(d);
                } else {
                    hold(d, () -> republishRetry(d));
                }
            }
            case DEAD_LETTER -> deadLetter(d, disposition);
        }
        return DONE;
    }

    private void holdThenRequeue(Delivery d) {
        hold(d, () -> requeue(d));
    }

    private void hold(Delivery d, Runnable then) {
        d.stage = Delivery.Stage.HELD;
        if (stopping) {
            requeue(d); // shutting down: no point in waiting
            return;
        }
        try {
            d.hold = resources.scheduler().schedule(() -> {
                if (!d.isSettled()) {
                    then.run();
                }
            }, settings.retryDelay().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            requeue(d);
        }
    }

    /** Classic queues: deliver the message again as a copy that carries the attempt count. */
    private void republishRetry(Delivery d) {
        IncomingRabbitMetadata m = d.metadata;
        Map<String, Object> headers = new HashMap<>(m.properties().getHeaders() == null ? Map.of() : m.properties().getHeaders());
        headers.put(RabbitHeaders.RETRY_ATTEMPTS, m.attempt());
        headers.put(RabbitHeaders.ORIGINAL_EXCHANGE, m.exchange());
        headers.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, m.routingKey());
        publishThenAck(d, "retry", "", settings.queue(), headers, () -> { });
    }

    private void deadLetter(Delivery d, Disposition disposition) {
        IncomingRabbitMetadata m = d.metadata;
        GuardEvent guard = d.guardEvent;
        String consumer = disposition.consumer() != null ? disposition.consumer()
                : guard != null ? guard.consumer() : name();
        String keyDigest = !disposition.keyDigest().isEmpty() ? disposition.keyDigest()
                : guard != null ? guard.keyDigest() : "";
        Map<String, Object> headers = new HashMap<>(m.properties().getHeaders() == null ? Map.of() : m.properties().getHeaders());
        // The count and the correlation header belong to this queue's retries, not to the dead letter.
        headers.remove(RabbitHeaders.RETRY_ATTEMPTS);
        headers.remove(ConfirmingPublisher.SEQUENCE_HEADER);
        headers.put(RabbitHeaders.OUTCOME, disposition.outcome().name());
        headers.put(RabbitHeaders.REASON, disposition.reason());
        headers.put(RabbitHeaders.CONSUMER, consumer);
        headers.put(RabbitHeaders.CHANNEL, name());
        headers.put(RabbitHeaders.QUEUE, settings.queue());
        headers.put(RabbitHeaders.ATTEMPTS, m.attempt());
        headers.put(RabbitHeaders.ORIGINAL_EXCHANGE, m.exchange());
        headers.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, m.routingKey());
        publishThenAck(d, "dead-letter", settings.deadLetterExchange(), settings.deadLetterRoutingKey(), headers,
                () -> LogId.ONCE0505W.log(name(), consumer, keyDigest.isEmpty() ? "-" : keyDigest, bodyHash(m.body()),
                        disposition.outcome(), m.attempt(), settings.deadLetterExchange(), logReason(disposition)));
    }

    /**
     * Publishes the message (unchanged but for {@code headers}) with confirms and mandatory routing,
     * then acks the original. If the publish fails, nothing is lost: the original is requeued.
     */
    private void publishThenAck(Delivery d, String what, String exchange, String routingKey,
                                Map<String, Object> headers, Runnable onConfirmed) {
        d.stage = Delivery.Stage.PUBLISHING;
        AMQP.BasicProperties props = d.metadata.properties().builder().headers(headers).build();
        publisher.publish(exchange, routingKey, true, props, d.metadata.body()).whenComplete((ok, failure) -> {
            if (failure == null) {
                onConfirmed.run();
                settleAck(d);
            } else {
                LogId.ONCE0506W.log(what, name(), bodyHash(d.metadata.body()), describe(failure),
                        Durations.format(settings.retryDelay()));
                holdThenRequeue(d);
            }
        });
    }

    private void settleAck(Delivery d) {
        if (d.claimSettlement()) {
            unsettled.remove(d);
            if (!d.isStale()) {
                try {
                    d.channel.basicAck(d.deliveryTag, false);
                } catch (IOException | RuntimeException e) {
                    // Channel closed meanwhile: the broker redelivers, and the guard sees a duplicate.
                }
            }
        }
    }

    /** @return whether this call settled the delivery */
    private boolean requeue(Delivery d) {
        if (!d.claimSettlement()) {
            return false;
        }
        unsettled.remove(d);
        if (d.hold != null) {
            d.hold.cancel(false);
        }
        if (!d.isStale()) {
            try {
                d.channel.basicNack(d.deliveryTag, false, true);
            } catch (IOException | RuntimeException e) {
                // Channel closed meanwhile: the broker requeued it already.
            }
        }
        return true;
    }

    /** A delivery of a closed channel: nothing to send, the broker has it back. */
    private void forget(Delivery d) {
        if (d.claimSettlement()) {
            unsettled.remove(d);
        }
    }

    // ---------------------------------------------------------------- helpers

    private static int intHeader(Map<String, Object> headers, String name) {
        return headers.get(name) instanceof Number n ? (int) Math.max(0, Math.min(n.longValue(), Integer.MAX_VALUE / 2)) : 0;
    }

    private static String stringHeader(Map<String, Object> headers, String name, String fallback) {
        Object v = headers.get(name);
        return v == null ? fallback : v.toString(); // LongString.toString() is its UTF-8 text
    }

    /** For FAILED the exception message may quote business data: the log gets its class only. */
    private static String logReason(Disposition d) {
        return d.outcome() == Outcome.FAILED ? d.reason().replaceFirst(":.*", "") : d.reason();
    }

    private static String describe(Throwable e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    /** Short SHA-256 of a body: identifies a message in logs without revealing it. */
    private static String bodyHash(byte[] body) {
        try {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(body);
            return HexFormat.of().formatHex(sha, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
