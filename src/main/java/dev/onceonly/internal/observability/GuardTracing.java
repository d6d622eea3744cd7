package dev.onceonly.internal.observability;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.spi.GuardListener;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;

/**
 * OpenTelemetry spans of the guard's own work: {@code onceonly.claim}, {@code onceonly.ledger} and
 * {@code onceonly.finalise}, each a child of whatever span is current (the consumer's trace), with
 * the consumer as attribute. Never the key or the body.
 */
public final class GuardTracing implements GuardListener {

    private static final AttributeKey<String> CONSUMER = AttributeKey.stringKey("onceonly.consumer");

    private final Tracer tracer;

    /**
     * A listener opening spans on {@code tracer}.
     *
     * @param tracer OnceOnly's tracer
     */
    public GuardTracing(Tracer tracer) {
        this.tracer = tracer;
    }

    @Override
    public void onOutcome(GuardEvent event) {
        // Outcomes are counted by GuardMetrics; spans cover the phases.
    }

    @Override
    public Phase startPhase(String consumer, String phase) {
        Span span = tracer.spanBuilder("onceonly." + phase).setAttribute(CONSUMER, consumer).startSpan();
        return span::end;
    }
}
