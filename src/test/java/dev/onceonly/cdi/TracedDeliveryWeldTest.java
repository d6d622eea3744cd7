package dev.onceonly.cdi;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.observability.GuardTracing;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Handover;
import dev.onceonly.testing.InMemoryTelemetry;
import dev.onceonly.testing.RecordingDispatch;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The interceptor makes the span of the delivery it guards current around the whole guarded call,
 * on the handler's thread: the guard's phase spans and whatever the handler does are inside it.
 */
@EnableWeld
class TracedDeliveryWeldTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SENDER = "00f067aa0ba902b7";
    static final InMemoryTelemetry TELEMETRY = new InMemoryTelemetry();

    @BeforeAll
    static void configure() {
        System.setProperty("onceonly.store", "memory");
    }

    @AfterAll
    static void unconfigure() {
        System.clearProperty("onceonly.store");
        TELEMETRY.close();
    }

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(WeldInitiator.createWeld()
                    .addBeanClasses(TracedConsumer.class, GuardSpans.class, IdempotentMessageInterceptor.class, OnceOnlyRuntime.class,
                            Handover.class, CurrentIdempotencyContext.class)
                    .addExtension(new OnceOnlyExtension()))
            .activate(ApplicationScoped.class)
            .build();

    @Inject
    TracedConsumer consumer;

    @Inject
    Handover handover;

    @BeforeEach
    void forgetSpans() {
        TELEMETRY.reset();
    }

    /** The guard's phase spans, as MicroProfile Telemetry's {@code TelemetryListeners} contributes them. */
    @ApplicationScoped
    static class GuardSpans {
        @Produces
        GuardListener tracing() {
            return new GuardTracing(TELEMETRY.tracer());
        }
    }

    @ApplicationScoped
    public static class TracedConsumer {
        private volatile SpanContext current;

        @IdempotentMessage(consumer = "traced", keyStrategy = KeyStrategy.CONTENT)
        public void onOrder(String order) {
            current = Span.current().getSpanContext();
            if (order.startsWith("fail")) {
                throw new IllegalStateException("the handler failed on " + order);
            }
        }

        SpanContext current() {
            return current;
        }
    }

    /** Posts {@code order} as a delivery whose headers carry the publisher's trace context, then invokes the consumer with it. */
    private void deliver(String order) {
        MessageView message = MessageView.of("orders", "order.placed", null, Map.of("traceparent", "00-" + TRACE + "-" + SENDER + "-01"),
                order.getBytes(StandardCharsets.UTF_8));
        handover.post(order, new RecordingDispatch(message, true, TELEMETRY.messageTracing()));
        consumer.onOrder(order);
    }

    @Test
    void aDeliveryIsHandledInsideAConsumerSpanUnderThePublishersContextWithTheGuardsPhasesBeneath() {
        deliver("order-" + UUID.randomUUID());
        SpanData process = TELEMETRY.span("queue process");
        assertEquals(TRACE, process.getTraceId());
        assertEquals(SENDER, process.getParentSpanId());
        assertEquals(process.getSpanId(), consumer.current().getSpanId(), "current in the handler");
        for (String phase : List.of("onceonly.claim", "onceonly.finalise")) {
            SpanData span = TELEMETRY.span(phase);
            assertEquals(process.getSpanId(), span.getParentSpanId(), phase);
            assertEquals(TRACE, span.getTraceId(), phase);
        }
        assertFalse(Span.current().getSpanContext().isValid(), "nothing left current after the call");
    }

    @Test
    void aHandlerThatThrowsMarksTheConsumerSpanFailed() {
        assertThrows(IllegalStateException.class, () -> deliver("fail-" + UUID.randomUUID()));
        SpanData process = TELEMETRY.span("queue process");
        assertEquals(StatusCode.ERROR, process.getStatus().getStatusCode());
        assertEquals(IllegalStateException.class.getName(), process.getStatus().getDescription());
        assertFalse(Span.current().getSpanContext().isValid());
    }

    /** A guarded call no connector dispatched (a REST resource, a bean a consumer calls) opens no consumer span. */
    @Test
    void aCallNoConnectorDispatchedOpensNoConsumerSpan() {
        consumer.onOrder("direct-" + UUID.randomUUID());
        assertTrue(TELEMETRY.spans().stream().noneMatch(s -> s.getName().endsWith(" process")), TELEMETRY.spans().toString());
        assertFalse(TELEMETRY.span("onceonly.claim").getParentSpanContext().isValid());
    }
}
