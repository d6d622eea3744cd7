package dev.onceonly.testing;

import dev.onceonly.internal.observability.BrokerTracing;
import dev.onceonly.spi.MessageTracing;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;

import java.util.List;

/**
 * The OpenTelemetry SDK with an in-memory exporter and MicroProfile Telemetry's default propagators
 * (W3C trace context and baggage): every span ended is there to read at once.
 */
public final class InMemoryTelemetry implements AutoCloseable {

    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
    private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(provider)
            .setPropagators(ContextPropagators.create(TextMapPropagator.composite(
                    W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance())))
            .build();

    public OpenTelemetrySdk sdk() {
        return sdk;
    }

    public Tracer tracer() {
        return sdk.getTracer("dev.onceonly.test");
    }

    /** What {@code TelemetryListeners} gives the connector and the outbox for this SDK. */
    public MessageTracing messageTracing() {
        return BrokerTracing.of(sdk, tracer());
    }

    /** Every span ended so far, in the order they ended. */
    public List<SpanData> spans() {
        return exporter.getFinishedSpanItems();
    }

    /** Forgets the spans ended so far. */
    public void reset() {
        exporter.reset();
    }

    /** The one ended span of this name; fails when there is none or several. */
    public SpanData span(String name) {
        List<SpanData> named = spans().stream().filter(s -> s.getName().equals(name)).toList();
        if (named.size() != 1) {
            throw new AssertionError("expected one span '" + name + "', found " + named.size() + " among "
                    + spans().stream().map(SpanData::getName).toList());
        }
        return named.get(0);
    }

    @Override
    public void close() {
        provider.close();
    }
}
