package dev.onceonly.internal.observability;

import dev.onceonly.spi.MessageTracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link MessageTracing} on OpenTelemetry: trace context goes into and comes out of AMQP headers
 * through the application's configured {@link TextMapPropagator} (MicroProfile Telemetry's default
 * writes W3C {@code traceparent} and {@code tracestate}). Spans follow the messaging semantic
 * conventions: {@code <exchange> publish} (PRODUCER; the default exchange is {@code amq.default}),
 * {@code <exchange> create} for an outbox send, {@code <queue> process} (CONSUMER), with
 * {@code messaging.system=rabbitmq}, the destination and the operation; never a body, key or
 * routing key.
 *
 * <p>What a delivery's headers carry is used as the consumer span's parent and nothing more: only
 * the extracted span context is kept (baggage a publisher sent is dropped), the extraction starts
 * from the root context (never from whatever the consuming thread has current), and a header the
 * propagator does not accept leaves the span the root of a new trace.
 */
public final class BrokerTracing implements MessageTracing {

    private static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    private static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    private static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    private static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    /** The W3C header that, set by the application, means it propagates its own trace context. */
    private static final String TRACEPARENT = "traceparent";
    /** How the semantic conventions name RabbitMQ's default exchange (whose real name is empty). */
    private static final String DEFAULT_EXCHANGE = "amq.default";

    private static final TextMapSetter<Map<String, Object>> SETTER = (headers, name, value) -> {
        if (headers != null) {
            headers.putIfAbsent(name, value);
        }
    };

    /** Reads text headers only: the connector gives an AMQP long string as String when it is UTF-8, else as bytes. */
    private static final TextMapGetter<Map<String, Object>> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, Object> headers) {
            return headers.keySet();
        }

        @Override
        public String get(Map<String, Object> headers, String name) {
            return headers != null && headers.get(name) instanceof String text ? text : null;
        }
    };

    private final Tracer tracer;
    private final TextMapPropagator propagator;

    private BrokerTracing(Tracer tracer, TextMapPropagator propagator) {
        this.tracer = tracer;
        this.propagator = propagator;
    }

    /**
     * The tracing of messages for {@code telemetry}: {@link MessageTracing#NONE} when it propagates
     * nothing (telemetry disabled: MicroProfile Telemetry's no-op OpenTelemetry, or
     * {@code otel.propagators=none}), so that publishing and consuming then cost nothing.
     *
     * @param telemetry the application's OpenTelemetry
     * @param tracer    OnceOnly's tracer
     * @return the tracing
     */
    public static MessageTracing of(OpenTelemetry telemetry, Tracer tracer) {
        TextMapPropagator propagator = telemetry.getPropagators().getTextMapPropagator();
        if (propagator == TextMapPropagator.noop()) {
            return MessageTracing.NONE;
        }
        return new BrokerTracing(tracer, propagator);
    }

    @Override
    public Produced produce(Operation operation, String exchange, Map<String, Object> headers) {
        String destination = exchange.isEmpty() ? DEFAULT_EXCHANGE : exchange;
        io.opentelemetry.api.trace.Span span = tracer.spanBuilder(destination + " " + operation.label())
                .setSpanKind(SpanKind.PRODUCER)
                .setAttribute(SYSTEM, "rabbitmq")
                .setAttribute(DESTINATION, destination)
                .setAttribute(OPERATION_TYPE, operation == Operation.PUBLISH ? "send" : "create")
                .setAttribute(OPERATION_NAME, operation.label())
                .startSpan();
        if (headers.containsKey(TRACEPARENT)) {
            // The application propagates a trace context of its own: it goes out as it was set.
            return new Produced(new OpenSpan(span, null), headers);
        }
        Map<String, Object> traced = new LinkedHashMap<>(headers);
        propagator.inject(Context.current().with(span), traced, SETTER);
        return new Produced(new OpenSpan(span, null), traced);
    }

    @Override
    public Span process(String queue, Map<String, Object> headers) {
        SpanContext sent = io.opentelemetry.api.trace.Span.fromContext(propagator.extract(Context.root(), headers, GETTER))
                .getSpanContext();
        Context parent = sent.isValid() ? Context.root().with(io.opentelemetry.api.trace.Span.wrap(sent)) : Context.root();
        io.opentelemetry.api.trace.Span span = tracer.spanBuilder(queue + " process")
                .setParent(parent)
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute(SYSTEM, "rabbitmq")
                .setAttribute(DESTINATION, queue)
                .setAttribute(OPERATION_TYPE, "process")
                .setAttribute(OPERATION_NAME, "process")
                .startSpan();
        return new OpenSpan(span, span.makeCurrent());
    }

    /** An OpenTelemetry span, and the scope that made it current (or {@code null}). */
    private record OpenSpan(io.opentelemetry.api.trace.Span span, Scope scope) implements Span {

        @Override
        public void failed(Throwable failure) {
            span.setStatus(StatusCode.ERROR, failure.getClass().getName());
        }

        @Override
        public void end() {
            if (scope != null) {
                scope.close();
            }
            span.end();
        }
    }
}
