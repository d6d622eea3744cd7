package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.OutgoingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One outgoing channel: publishes every message it receives with publisher confirms, and acks the
 * message only once the broker confirmed it (nacks it when the publish fails). An
 * {@code Emitter.send(payload)} therefore completes when the message is safely with the broker, and
 * fails when no queue takes it (mandatory publishing, unless {@code mandatory=false}).
 *
 * <p>Payloads are {@code byte[]} (published as they are) or {@link String} (UTF-8,
 * {@code text/plain}); an {@link OutgoingRabbitMetadata} on the message sets routing key, headers,
 * message id and other properties. Demand is signalled only once connected, and never more than
 * {@code max-inflight} publishes await their confirm.
 *
 * <p>Each publish is a PRODUCER span ({@link MessageTracing}), a child of the context current on the
 * thread that hands the message over (the sender's, when the channel has demand), ending with the
 * confirm; its trace context goes into the message's headers, unless the message set its own.
 */
final class OutboundChannel extends RabbitEndpoint implements Subscriber<Message<?>> {

    private final OutgoingSettings settings;
    private final Supplier<MessageTracing> tracing;
    private final AtomicInteger inflight = new AtomicInteger();
    private volatile Subscription subscription;
    private volatile ConfirmingPublisher publisher;
    private boolean demandStarted;
    private volatile Connection connection;

    OutboundChannel(OutgoingSettings settings, RabbitResources resources, Supplier<MessageTracing> tracing) {
        super(settings.channel(), settings.connection(), resources);
        this.settings = settings;
        this.tracing = tracing;
    }

    @Override
    boolean connected() {
        Connection c = connection;
        return c != null && c.isOpen();
    }

    @Override
    void open() throws IOException, TimeoutException {
        connection = resources.open(connection(), name(), "publish");
        if (settings.declare() && !settings.exchange().isEmpty()) {
            try (Channel ch = connection.createChannel()) {
                ch.exchangeDeclare(settings.exchange(), settings.exchangeType(), true);
            }
        }
        publisher = new ConfirmingPublisher(connection, resources.executor(), resources.scheduler(), settings.confirmTimeout());
        LogId.ONCE0508I.log(name(), settings.exchange(), connection().describe());
    }

    @Override
    void opened() {
        startDemand();
    }

    @Override
    void close() {
        if (publisher != null) {
            publisher.close();
        }
        Connections.closeQuietly(connection);
    }

    @Override
    public void onSubscribe(Subscription s) {
        subscription = s;
        startDemand();
    }

    /** Asks for the first messages once both the subscription and the connection are there. */
    private void startDemand() {
        synchronized (lifecycle) {
            if (demandStarted || subscription == null || publisher == null || stopping) {
                return;
            }
            demandStarted = true;
        }
        subscription.request(settings.maxInflight());
    }

    @Override
    public void onNext(Message<?> message) {
        inflight.incrementAndGet();
        CompletableFuture<Void> confirmed;
        MessageTracing.Span span = MessageTracing.Span.NONE;
        try {
            OutgoingRabbitMetadata meta = message.getMetadata(OutgoingRabbitMetadata.class).orElse(null);
            byte[] body = body(message.getPayload());
            String exchange = meta != null && meta.exchange() != null ? meta.exchange() : settings.exchange();
            String routingKey = meta != null && meta.routingKey() != null ? meta.routingKey() : settings.routingKey();
            MessageTracing.Produced traced = tracing.get().produce(MessageTracing.Operation.PUBLISH, exchange,
                    meta != null ? meta.headers() : Map.of());
            span = traced.span();
            // Mandatory by default: a message no queue takes fails the send rather than being confirmed and dropped.
            confirmed = publisher.publish(exchange, routingKey, settings.mandatory(),
                    properties(message.getPayload(), meta, traced.headers()), body);
        } catch (RuntimeException e) {
            confirmed = CompletableFuture.failedFuture(e);
        }
        MessageTracing.Span published = span;
        confirmed.whenComplete((ok, failure) -> {
            // The span ends before the application hears of the outcome: what it does next (a
            // test reading the spans, a follow-up publish) comes after the publish in the trace.
            if (failure != null) {
                published.failed(failure);
            }
            published.end();
            if (failure == null) {
                message.ack();
            } else {
                message.nack(failure);
            }
            inflight.decrementAndGet();
            subscription.request(1);
        });
    }

    @Override
    public void onError(Throwable t) {
        // The upstream (the application's emitter or method) failed; nothing is left to publish.
    }

    @Override
    public void onComplete() {
        // Nothing to flush: every publish completes on its own confirm.
    }

    /** Waits up to the drain timeout for outstanding confirms, then closes the connection. */
    void stop() {
        synchronized (lifecycle) {
            stopping = true;
        }
        awaitQuietly(() -> inflight.get() == 0, settings.drainTimeout());
        if (inflight.get() > 0) {
            LogId.ONCE0510W.log(name(), inflight.get(), Durations.format(settings.drainTimeout()));
        }
        synchronized (lifecycle) {
            close();
        }
    }

    private static byte[] body(Object payload) {
        if (payload instanceof byte[] bytes) {
            return bytes;
        }
        if (payload instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        throw new IllegalArgumentException("payload of type " + (payload == null ? "null" : payload.getClass().getName())
                + " cannot be published: send byte[] or String");
    }

    private AMQP.BasicProperties properties(Object payload, OutgoingRabbitMetadata meta, Map<String, Object> headers) {
        boolean persistent = meta != null && meta.persistent() != null ? meta.persistent() : settings.persistent();
        String contentType = meta != null && meta.contentType() != null ? meta.contentType()
                : payload instanceof String ? "text/plain; charset=utf-8" : "application/octet-stream";
        AMQP.BasicProperties.Builder b = new AMQP.BasicProperties.Builder()
                .deliveryMode(persistent ? 2 : 1)
                .contentType(contentType)
                .headers(headers.isEmpty() ? null : headers);
        if (meta != null) {
            b.messageId(meta.messageId())
                    .correlationId(meta.correlationId())
                    .expiration(meta.expiration())
                    .priority(meta.priority());
        }
        return b.build();
    }
}
