package dev.onceonly.internal.observability;

import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.rabbitmq.DeadLetterListener;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.MessageTracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Tracer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;

/**
 * Contributes the OpenTelemetry metrics and tracing listeners, and the tracing of messages across
 * the broker, when MicroProfile Telemetry is present. Vetoed by the CDI extension ({@code cdi.OnceOnlyExtension}) when the OpenTelemetry API is not on the class path, so applications
 * without the feature never load it. {@code onceonly.metrics.enabled=false} switches it off: the
 * guard then pays nothing for metrics.
 */
@ApplicationScoped
public class TelemetryListeners {

    /** Dependent (no client proxy), so a disabled listener really is {@link GuardListener#NONE} and is left out. */
    @Produces
    GuardListener metrics(Instance<Meter> meter, TelemetrySettings settings) {
        if (!settings.metrics() || !meter.isResolvable()) {
            return GuardListener.NONE;
        }
        return new GuardMetrics(meter.get(), settings.consumers());
    }

    /** The outbox's metrics (asked for only when the application uses the outbox). Dependent, like {@link #metrics}. */
    @Produces
    OutboxListener outboxMetrics(Instance<Meter> meter, TelemetrySettings settings) {
        if (!settings.metrics() || !meter.isResolvable()) {
            return OutboxListener.NONE;
        }
        return new OutboxMetrics(meter.get());
    }

    /** The connector's dead letters (asked for on the first one). Dependent, like {@link #metrics}. */
    @Produces
    DeadLetterListener deadLetterMetrics(Instance<Meter> meter, TelemetrySettings settings) {
        if (!settings.metrics() || !meter.isResolvable()) {
            return DeadLetterListener.NONE;
        }
        return new DeadLetterMetrics(meter.get());
    }

    /** Spans of the guard's phases; {@code onceonly.tracing.enabled=false} leaves them out. Dependent, like {@link #metrics}. */
    @Produces
    GuardListener tracing(Instance<Tracer> tracer, TelemetrySettings settings) {
        if (!settings.tracing() || !tracer.isResolvable()) {
            return GuardListener.NONE;
        }
        return new GuardTracing(tracer.get());
    }

    /**
     * Trace context across the broker, for the connector and the outbox; {@code onceonly.tracing.enabled=false}
     * turns it off with the guard's spans. Dependent, like {@link #metrics}.
     */
    @Produces
    MessageTracing messageTracing(Instance<OpenTelemetry> telemetry, Instance<Tracer> tracer, TelemetrySettings settings) {
        if (!settings.tracing() || !telemetry.isResolvable() || !tracer.isResolvable()) {
            return MessageTracing.NONE;
        }
        return BrokerTracing.of(telemetry.get(), tracer.get());
    }
}
