package dev.onceonly.internal.observability;

import java.util.List;

/**
 * What the telemetry beans need from the deployment, handed down by the composition root
 * ({@code cdi}), which sits above this package: observability never reaches up to the CDI extension.
 *
 * @param metrics   whether the guard's and the outbox's metrics are on ({@code onceonly.metrics.enabled})
 * @param tracing   whether the guard's spans and trace context across the broker are on ({@code onceonly.tracing.enabled})
 * @param consumers the consumers found at deployment, sorted: their metrics exist from the start
 */
public record TelemetrySettings(boolean metrics, boolean tracing, List<String> consumers) {

    /**
     * Copies {@code consumers}, so the settings do not change after they are read.
     *
     * @param metrics   whether metrics are on
     * @param tracing   whether tracing is on
     * @param consumers the consumers found at deployment, sorted
     */
    public TelemetrySettings {
        consumers = List.copyOf(consumers);
    }
}
