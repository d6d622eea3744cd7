package dev.onceonly.internal.cdi;

import dev.onceonly.internal.observability.BrokerTracing;
import dev.onceonly.internal.observability.GuardMetrics;
import dev.onceonly.internal.observability.GuardTracing;
import dev.onceonly.internal.observability.TelemetryListeners;
import dev.onceonly.internal.observability.TelemetrySettings;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.InMemoryTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Tracer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The telemetry beans get the deployment's settings from the composition root ({@link TelemetryBeans}),
 * not by reaching up to the extension: with MicroProfile Telemetry's beans there, the guard gets its
 * metrics and spans and the broker its trace context.
 */
@EnableWeld
class TelemetryBeansWeldTest {

    private static final InMemoryTelemetry TELEMETRY = new InMemoryTelemetry();

    @AfterAll
    static void close() {
        TELEMETRY.close();
    }

    /** What MicroProfile Telemetry contributes, on the in-memory SDK. */
    @ApplicationScoped
    static class Telemetry {
        @Produces
        OpenTelemetry openTelemetry() {
            return TELEMETRY.sdk();
        }

        @Produces
        Tracer tracer() {
            return TELEMETRY.tracer();
        }

        @Produces
        Meter meter() {
            return TELEMETRY.sdk().getMeter("dev.onceonly.test");
        }
    }

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(WeldInitiator.createWeld()
                    .addBeanClasses(TelemetryBeans.class, TelemetryListeners.class, Telemetry.class)
                    .addExtension(new OnceOnlyExtension()))
            .activate(ApplicationScoped.class)
            .build();

    @Inject
    TelemetrySettings settings;

    @Inject
    Instance<GuardListener> listeners;

    @Inject
    MessageTracing tracing;

    @Test
    void theTelemetryBeansAreWiredFromTheSettingsTheExtensionValidated() {
        assertEquals(new TelemetrySettings(true, true, List.of()), settings);
        List<GuardListener> all = listeners.stream().toList();
        assertTrue(all.stream().anyMatch(GuardMetrics.class::isInstance), all::toString);
        assertTrue(all.stream().anyMatch(GuardTracing.class::isInstance), all::toString);
        assertInstanceOf(BrokerTracing.class, tracing);
    }
}
