package dev.onceonly.internal.observability;

import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.rabbitmq.DeadLetterListener;
import dev.onceonly.spi.GuardListener;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.util.AnnotationLiteral;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.annotation.RegistryType;

/**
 * Adds the MicroProfile Metrics listeners ({@link MpGuardMetrics}, {@link MpOutboxMetrics},
 * {@link MpDeadLetterMetrics}) as beans;
 * the CDI extension calls {@link #register} only when the MicroProfile Metrics API is deployed, so
 * nothing here is loaded otherwise. Not a bean class itself, for the reason {@code cdi.HealthChecks}
 * gives: Liberty's injection engine fails on a bean class naming an API that is absent (CWNEN0049W),
 * even a vetoed one. Beside the OpenTelemetry listeners of {@link TelemetryListeners}, not instead:
 * with both features on, both record. {@code onceonly.metrics.enabled=false} switches these off too.
 */
public final class MpMetricsBeans {

    /**
     * The application's registry, asked for by its type: Liberty's default producer reads the
     * injection point's {@code @RegistryScope} and gives {@code null} to a lookup that has none.
     */
    @SuppressWarnings("all") // an annotation literal implements the annotation type
    static final class ApplicationRegistry extends AnnotationLiteral<RegistryType> implements RegistryType {
        private static final long serialVersionUID = 1L;

        @Override
        public MetricRegistry.Type type() {
            return MetricRegistry.Type.APPLICATION;
        }
    }

    private MpMetricsBeans() {
    }

    /**
     * Adds a dependent {@link GuardListener}, {@link OutboxListener} and {@link DeadLetterListener}
     * bean, each {@code NONE} when metrics are off or no application {@link MetricRegistry} is there.
     *
     * @param abd the event of the extension that found the API
     */
    public static void register(AfterBeanDiscovery abd) {
        abd.addBean().beanClass(MpMetricsBeans.class).types(GuardListener.class, Object.class).scope(Dependent.class)
                .produceWith(MpMetricsBeans::guardMetrics);
        abd.addBean().beanClass(MpMetricsBeans.class).types(OutboxListener.class, Object.class).scope(Dependent.class)
                .produceWith(MpMetricsBeans::outboxMetrics);
        abd.addBean().beanClass(MpMetricsBeans.class).types(DeadLetterListener.class, Object.class).scope(Dependent.class)
                .produceWith(MpMetricsBeans::deadLetterMetrics);
    }

    private static GuardListener guardMetrics(Instance<Object> beans) {
        Instance<TelemetrySettings> settings = beans.select(TelemetrySettings.class);
        Instance<MetricRegistry> registry = beans.select(MetricRegistry.class, new ApplicationRegistry());
        return on(settings, registry) ? new MpGuardMetrics(registry.get(), settings.get().consumers()) : GuardListener.NONE;
    }

    private static OutboxListener outboxMetrics(Instance<Object> beans) {
        Instance<MetricRegistry> registry = beans.select(MetricRegistry.class, new ApplicationRegistry());
        return on(beans.select(TelemetrySettings.class), registry) ? new MpOutboxMetrics(registry.get()) : OutboxListener.NONE;
    }

    private static DeadLetterListener deadLetterMetrics(Instance<Object> beans) {
        Instance<MetricRegistry> registry = beans.select(MetricRegistry.class, new ApplicationRegistry());
        return on(beans.select(TelemetrySettings.class), registry) ? new MpDeadLetterMetrics(registry.get()) : DeadLetterListener.NONE;
    }

    /** Metrics are on, and there is a registry: an application without the composition root's settings records nothing. */
    private static boolean on(Instance<TelemetrySettings> settings, Instance<MetricRegistry> registry) {
        return settings.isResolvable() && settings.get().metrics() && registry.isResolvable() && registry.get() != null;
    }
}
