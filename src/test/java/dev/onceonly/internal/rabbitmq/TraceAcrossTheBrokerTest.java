package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.OutgoingRabbitMetadata;

import dev.onceonly.testing.Guarded;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.GuardEngine;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.observability.GuardTracing;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.InMemoryTelemetry;
import dev.onceonly.testing.Settings;
import dev.onceonly.testing.TestRabbit;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * One trace across the machine's RabbitMQ: an outgoing channel publishes inside a span, an incoming
 * channel delivers, the delivery's handling runs in the span its {@link Dispatch} opens, as the
 * interceptor does, around the guard (with its phase spans) and a handler that publishes a follow-up.
 */
class TraceAcrossTheBrokerTest {

    static final Duration LIMIT = Duration.ofSeconds(20);
    /** Connecting retries every 500 ms until then: a broker busy with other builds may time a first connection out. */
    static final Duration CONNECT_LIMIT = Duration.ofSeconds(60);

    final String exchange = "onceonly.unit.trace." + UUID.randomUUID();
    final String queue = exchange + ".in";
    final String followUps = exchange + ".next";
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    final InMemoryTelemetry telemetry = new InMemoryTelemetry();
    final MessageTracing tracing = telemetry.messageTracing();
    final Handover handover = new Handover();
    final InboundChannelTest.Probe probe = new InboundChannelTest.Probe();
    final ConsumerSettings settings = Settings.defaults("inventory", KeyStrategy.CONTENT);
    final GuardEngine engine = new GuardEngine(new InMemoryClaimStore(1000, Clock.systemUTC()), TransactionRunner.NONE, null,
            scheduler, new GuardTracing(telemetry.tracer()), new KeyDeriver("oo:"));
    TestRabbit rabbit;
    OutboundChannel outbound;
    InboundChannel inbound;

    @BeforeEach
    void connect() throws Exception {
        rabbit = new TestRabbit();
        outbound = outbound("out", "order", tracing);
        inbound = new InboundChannel(TestChannelConfig.of(Map.of("channel-name", "in", "host", "127.0.0.1",
                "network-recovery-interval", "500ms", "queue.name", queue, "exchange.name", exchange, "exchange.type", "direct",
                "routing-keys", "order", "drain-timeout", "5s"),
                ChannelConfig.Direction.INCOMING).incoming(), resources, handover, () -> tracing, () -> DeadLetterListener.NONE);
        inbound.subscribe(probe);
        inbound.start();
        await("the incoming channel connected", CONNECT_LIMIT, inbound::connected, up -> up);
        rabbit.declareQueue(followUps);
        rabbit.bind(followUps, exchange, "next");
    }

    @AfterEach
    void close() throws Exception {
        if (inbound != null) {
            inbound.stopConsuming();
            inbound.drainAndClose();
        }
        if (outbound != null) {
            outbound.stop();
        }
        for (String q : List.of(queue, queue + ".dlq", followUps)) {
            rabbit.deleteQueue(q);
        }
        rabbit.deleteExchange(queue + ".dlx");
        rabbit.deleteExchange(exchange);
        rabbit.close();
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
        scheduler.shutdownNow();
        telemetry.close();
    }

    @Test
    void oneTraceFromThePublishThroughTheGuardAndHandlerToTheFollowUpPublish() throws Exception {
        Span request = telemetry.tracer().spanBuilder("request").startSpan();
        try (Scope ignored = request.makeCurrent()) {
            publish(outbound, Message.of("order-" + UUID.randomUUID()));
        } finally {
            request.end();
        }
        probe.request(1);
        Message<?> delivered = probe.next();
        // What the interceptor does for the @Incoming method invoked with this payload.
        Dispatch dispatch = handover.take(delivered.getPayload());
        MessageTracing.Span processing = dispatch.process();
        try {
            Guarded.call(engine, settings, dispatch, null, () -> publish(outbound, Message.of("follow-up")
                    .addMetadata(OutgoingRabbitMetadata.builder().routingKey("next").build())));
        } finally {
            processing.end();
        }
        delivered.ack().toCompletableFuture().get(20, TimeUnit.SECONDS);

        String trace = request.getSpanContext().getTraceId();
        SpanData consumer = telemetry.span(queue + " process");
        SpanData claim = telemetry.span("onceonly.claim");
        SpanData finalise = telemetry.span("onceonly.finalise");
        // Both publishes go to one exchange, so have one name: the first ended first (its confirm was awaited).
        List<SpanData> publishes = telemetry.spans().stream().filter(s -> s.getName().equals(exchange + " publish")).toList();
        assertEquals(2, publishes.size(), publishes.toString());
        SpanData publish = publishes.get(0);
        SpanData followUp = publishes.get(1);
        assertEquals(SpanKind.PRODUCER, publish.getKind());
        for (SpanData s : List.of(publish, consumer, claim, finalise, followUp)) {
            assertEquals(trace, s.getTraceId(), s.getName());
        }
        assertEquals(request.getSpanContext().getSpanId(), publish.getParentSpanId());
        assertEquals(publish.getSpanId(), consumer.getParentSpanId(), "the consumer continues the publisher's span");
        assertEquals(consumer.getSpanId(), claim.getParentSpanId());
        assertEquals(consumer.getSpanId(), finalise.getParentSpanId());
        assertEquals(consumer.getSpanId(), followUp.getParentSpanId(), "the handler's publish is part of the handling");

        GetResponse next = await("the follow-up in its queue", LIMIT, () -> rabbit.drain(followUps),
                got -> got.size() == 1).get(0);
        assertEquals("00-" + trace + "-" + followUp.getSpanId() + "-01",
                next.getProps().getHeaders().get("traceparent").toString());
    }

    /** A header anyone could have published: the delivery is handled and acked, in a trace of its own. */
    @Test
    void aDeliveryWithAMalformedTraceparentIsHandledInANewTrace() throws Exception {
        rabbit.publish(exchange, "order", new AMQP.BasicProperties.Builder()
                .headers(Map.of("traceparent", "00-not-a-trace-context-01", "tracestate", "k=v")).build(), "forged");
        probe.request(1);
        Message<?> delivered = probe.next();
        Dispatch dispatch = handover.take(delivered.getPayload());
        MessageTracing.Span processing = dispatch.process();
        try {
            assertNull(Guarded.call(engine, settings, dispatch, null, () -> null));
        } finally {
            processing.end();
        }
        delivered.ack().toCompletableFuture().get(20, TimeUnit.SECONDS);
        await("the delivery acked", LIMIT, () -> TestRabbit.total(queue), n -> n == 0);
        SpanData consumer = telemetry.span(queue + " process");
        assertFalse(consumer.getParentSpanContext().isValid(), consumer.toString());
        assertEquals(consumer.getSpanId(), telemetry.span("onceonly.claim").getParentSpanId());
    }

    @Test
    void withoutTelemetryNothingIsAddedToTheHeaders() throws Exception {
        OutboundChannel plain = outbound("plain", "next", MessageTracing.NONE);
        try {
            Span request = telemetry.tracer().spanBuilder("request").startSpan();
            try (Scope ignored = request.makeCurrent()) {
                publish(plain, Message.of("plain").addMetadata(OutgoingRabbitMetadata.builder().header("x-app", "kept").build()));
            } finally {
                request.end();
            }
        } finally {
            plain.stop();
        }
        GetResponse got = await("the message in its queue", LIMIT, () -> rabbit.drain(followUps), g -> g.size() == 1).get(0);
        Map<String, Object> headers = got.getProps().getHeaders();
        assertEquals("kept", headers.get("x-app").toString());
        assertFalse(headers.containsKey("traceparent") || headers.containsKey("tracestate"), headers.toString());
        assertEquals(List.of("request"), telemetry.spans().stream().map(SpanData::getName).toList(), "no producer span");
    }

    /** An outgoing channel to {@link #exchange}, connected, whose messages the test hands over itself. */
    private OutboundChannel outbound(String name, String routingKey, MessageTracing with) throws Exception {
        OutboundChannel channel = new OutboundChannel(TestChannelConfig.of(Map.of("channel-name", name, "host", "127.0.0.1",
                "network-recovery-interval", "500ms", "exchange.name", exchange, "exchange.type", "direct", "routing-key", routingKey),
                ChannelConfig.Direction.OUTGOING)
                .outgoing(), resources, () -> with);
        CompletableFuture<Void> demand = new CompletableFuture<>();
        channel.onSubscribe(new Subscription() {
            /** Asked once connected; messages are then handed over by publish, on the test's thread, as an emitter with demand does. */
            @Override
            public void request(long n) {
                demand.complete(null);
            }

            @Override
            public void cancel() {
            }
        });
        channel.start();
        demand.get(CONNECT_LIMIT.toSeconds(), TimeUnit.SECONDS);
        return channel;
    }

    /** Hands {@code message} to {@code channel} on this thread and waits for its confirm. */
    private static Void publish(OutboundChannel channel, Message<String> message) throws Exception {
        CompletableFuture<Throwable> settled = new CompletableFuture<>();
        channel.onNext(message.withAck(() -> {
            settled.complete(null);
            return CompletableFuture.completedFuture(null);
        }).withNack(reason -> {
            settled.complete(reason);
            return CompletableFuture.completedFuture(null);
        }));
        Throwable failure = settled.get(20, TimeUnit.SECONDS);
        assertNull(failure, String.valueOf(failure));
        return null;
    }
}
