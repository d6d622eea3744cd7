package dev.onceonly.internal.observability;

import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.InMemoryTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.baggage.Baggage;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Trace context into and out of message headers, on the OpenTelemetry SDK with an in-memory exporter. */
class BrokerTracingTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SENDER = "00f067aa0ba902b7";

    final InMemoryTelemetry telemetry = new InMemoryTelemetry();
    final MessageTracing tracing = telemetry.messageTracing();

    @AfterEach
    void close() {
        telemetry.close();
    }

    @Test
    void aPublishIsAProducerSpanUnderTheCurrentSpanWhoseContextGoesIntoTheHeaders() {
        Span request = telemetry.tracer().spanBuilder("request").startSpan();
        MessageTracing.Produced produced;
        try (Scope ignored = request.makeCurrent()) {
            produced = tracing.produce(MessageTracing.Operation.PUBLISH, "orders", Map.of("x-app", "kept"));
        }
        produced.span().end();
        request.end();

        SpanData publish = telemetry.span("orders publish");
        assertEquals(SpanKind.PRODUCER, publish.getKind());
        assertEquals(request.getSpanContext().getSpanId(), publish.getParentSpanId());
        assertEquals(request.getSpanContext().getTraceId(), publish.getTraceId());
        assertEquals("00-" + publish.getTraceId() + "-" + publish.getSpanId() + "-01", produced.headers().get("traceparent"));
        assertEquals("kept", produced.headers().get("x-app"));
        // The semantic conventions' attributes, and nothing that could hold a key or data.
        assertEquals(Map.of("messaging.system", "rabbitmq", "messaging.destination.name", "orders",
                "messaging.operation.type", "send", "messaging.operation.name", "publish"), attributes(publish));
    }

    @Test
    void anOutboxSendIsACreateSpanAndTheDefaultExchangeIsNamedAsTheConventionsSay() {
        MessageTracing.Produced produced = tracing.produce(MessageTracing.Operation.CREATE, "", Map.of());
        produced.span().end();
        SpanData create = telemetry.span("amq.default create");
        assertEquals("create", attributes(create).get("messaging.operation.type"));
        assertFalse(create.getParentSpanContext().isValid(), "no span was current: a trace of its own");
        assertTrue(produced.headers().get("traceparent").toString().contains(create.getSpanId()), produced.headers().toString());
    }

    @Test
    void aTraceparentTheApplicationSetIsNotOverwritten() {
        Map<String, Object> own = Map.of("traceparent", "00-" + TRACE + "-" + SENDER + "-01");
        Span request = telemetry.tracer().spanBuilder("request").startSpan();
        MessageTracing.Produced produced;
        try (Scope ignored = request.makeCurrent()) {
            produced = tracing.produce(MessageTracing.Operation.PUBLISH, "orders", own);
        }
        produced.span().end();
        assertSame(own, produced.headers(), "nothing added, not even a tracestate of another trace");
    }

    @Test
    void aDeliveryIsHandledInAConsumerSpanUnderThePublishersContextWithTheGuardsPhasesBeneath() {
        GuardListener guardSpans = new GuardTracing(telemetry.tracer());
        MessageTracing.Span processing = tracing.process("inventory", Map.of("traceparent", "00-" + TRACE + "-" + SENDER + "-01"));
        Span current = Span.current();
        guardSpans.startPhase("inventory", "claim").end();
        processing.end();
        assertFalse(Span.current().getSpanContext().isValid(), "no longer current once ended");

        SpanData consumer = telemetry.span("inventory process");
        assertEquals(consumer.getSpanId(), current.getSpanContext().getSpanId(), "current while the delivery is handled");
        assertEquals(SpanKind.CONSUMER, consumer.getKind());
        assertEquals(TRACE, consumer.getTraceId());
        assertEquals(SENDER, consumer.getParentSpanId());
        assertTrue(consumer.getParentSpanContext().isRemote());
        assertEquals(Map.of("messaging.system", "rabbitmq", "messaging.destination.name", "inventory",
                "messaging.operation.type", "process", "messaging.operation.name", "process"), attributes(consumer));
        SpanData claim = telemetry.span("onceonly.claim");
        assertEquals(consumer.getSpanId(), claim.getParentSpanId());
        assertEquals(TRACE, claim.getTraceId());
    }

    /** Whatever a publisher wrote: handling goes on, in a trace of its own. */
    @Test
    void aMalformedTraceparentIsIgnored() {
        List<Object> malformed = List.of("garbage", "00-" + TRACE + "-" + SENDER, "ff-" + TRACE + "-" + SENDER + "-01",
                "00-00000000000000000000000000000000-" + SENDER + "-01", "00-" + TRACE + "-0000000000000000-01",
                ("00-" + TRACE + "-" + SENDER + "-01").getBytes(StandardCharsets.UTF_8), 42, "");
        for (Object value : malformed) {
            tracing.process("inventory", Map.of("traceparent", value)).end();
        }
        List<SpanData> spans = telemetry.spans();
        assertEquals(malformed.size(), spans.size());
        for (SpanData s : spans) {
            assertFalse(s.getParentSpanContext().isValid(), "a root: " + s);
            assertNotEquals(TRACE, s.getTraceId());
        }
    }

    /** A publisher's headers give the parent and nothing else: no baggage travels on into this application's calls. */
    @Test
    void baggageAPublisherSentIsNotTaken() {
        MessageTracing.Span processing = tracing.process("inventory",
                Map.of("traceparent", "00-" + TRACE + "-" + SENDER + "-01", "baggage", "role=admin"));
        Baggage baggage = Baggage.current();
        processing.end();
        assertTrue(baggage.isEmpty(), baggage.toString());
        assertEquals(SENDER, telemetry.span("inventory process").getParentSpanId());
    }

    @Test
    void aFailedHandlingMarksTheSpanNamingTheExceptionsClassOnly() {
        MessageTracing.Span processing = tracing.process("inventory", Map.of());
        processing.failed(new IllegalStateException("card 4111 1111 1111 1111"));
        processing.end();
        SpanData consumer = telemetry.span("inventory process");
        assertEquals(StatusCode.ERROR, consumer.getStatus().getStatusCode());
        assertEquals(IllegalStateException.class.getName(), consumer.getStatus().getDescription());
        assertTrue(consumer.getEvents().isEmpty(), "no exception event with its message: " + consumer.getEvents());
    }

    /** MicroProfile Telemetry disabled (its default) injects a no-op OpenTelemetry: nothing is added or opened. */
    @Test
    void noOpTelemetryTracesNothing() {
        MessageTracing none = BrokerTracing.of(OpenTelemetry.noop(), OpenTelemetry.noop().getTracer("x"));
        assertSame(MessageTracing.NONE, none);
        Map<String, Object> headers = Map.of("x-app", "kept");
        assertSame(headers, none.produce(MessageTracing.Operation.PUBLISH, "orders", headers).headers());
        assertSame(MessageTracing.Span.NONE, none.process("inventory", Map.of("traceparent", "00-" + TRACE + "-" + SENDER + "-01")));
    }

    /** Propagation without an SDK (no spans recorded): the publisher's context passes through unchanged, without errors. */
    @Test
    void withoutRecordingTheContextStillPassesThrough() {
        OpenTelemetry propagating = OpenTelemetry.propagating(ContextPropagators.create(W3CTraceContextPropagator.getInstance()));
        MessageTracing passing = BrokerTracing.of(propagating, propagating.getTracer("x"));
        MessageTracing.Span processing = passing.process("inventory", Map.of("traceparent", "00-" + TRACE + "-" + SENDER + "-01"));
        MessageTracing.Produced next;
        try {
            next = passing.produce(MessageTracing.Operation.PUBLISH, "orders", Map.of());
            next.span().end();
        } finally {
            processing.end();
        }
        assertEquals("00-" + TRACE + "-" + SENDER + "-01", next.headers().get("traceparent"));
    }

    private static Map<String, String> attributes(SpanData span) {
        return span.getAttributes().asMap().entrySet().stream()
                .collect(Collectors.toMap(e -> e.getKey().getKey(), e -> String.valueOf(e.getValue())));
    }
}
