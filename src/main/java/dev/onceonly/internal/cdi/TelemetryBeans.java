package dev.onceonly.internal.cdi;

import dev.onceonly.internal.observability.TelemetrySettings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;

/**
 * Hands observability's telemetry beans the settings validated at deployment, so that the
 * dependency runs from the composition root down to observability and never back up. Loads no
 * OpenTelemetry type: it stays harmless when the extension vetoes the telemetry beans.
 */
@ApplicationScoped
public class TelemetryBeans {

    /** Dependent: a record cannot be proxied, and it is read only while the telemetry beans are made. */
    @Produces
    @Dependent
    TelemetrySettings telemetrySettings(OnceOnlyExtension extension) {
        return new TelemetrySettings(extension.global().metrics(), extension.global().tracing(), extension.consumerNames());
    }
}
