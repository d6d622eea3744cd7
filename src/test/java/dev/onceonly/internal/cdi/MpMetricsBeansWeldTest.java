package dev.onceonly.internal.cdi;

import dev.onceonly.internal.observability.MpGuardMetrics;
import dev.onceonly.internal.observability.MpOutboxMetrics;
import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.spi.GuardListener;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.spi.InjectionPoint;
import jakarta.inject.Inject;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.annotation.RegistryType;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With the MicroProfile Metrics API deployed, the extension adds the MP Metrics listeners, which find
 * the application's registry the way Liberty's {@code mpMetrics-5.1} offers it: its default producer
 * reads the injection point's scope and gives {@code null} to a lookup without one, its
 * {@code @RegistryType(APPLICATION)} producer gives the registry to anyone.
 */
@EnableWeld
class MpMetricsBeansWeldTest {

    /** What Liberty's mpMetrics-5.1 contributes, on a registry whose metrics ignore what they record. */
    @ApplicationScoped
    static class Registries {
        private static final MetricRegistry APPLICATION = (MetricRegistry) Proxy.newProxyInstance(
                MpMetricsBeansWeldTest.class.getClassLoader(), new Class<?>[] {MetricRegistry.class},
                (p, m, args) -> m.getReturnType().isInterface()
                        ? Proxy.newProxyInstance(MpMetricsBeansWeldTest.class.getClassLoader(), new Class<?>[] {m.getReturnType()}, (q, c, a) -> null)
                        : null);

        @Produces
        @Default
        @Dependent
        MetricRegistry byInjectionPoint(InjectionPoint ip) {
            return ip == null || ip.getAnnotated() == null ? null : APPLICATION;
        }

        @Produces
        @RegistryType(type = MetricRegistry.Type.APPLICATION)
        MetricRegistry application() {
            return APPLICATION;
        }
    }

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(WeldInitiator.createWeld()
                    .addBeanClasses(TelemetryBeans.class, Registries.class)
                    .addExtension(new OnceOnlyExtension()))
            .activate(ApplicationScoped.class)
            .build();

    @Inject
    Instance<GuardListener> listeners;

    @Inject
    Instance<OutboxListener> outboxListeners;

    @Test
    void theListenersRecordOnTheApplicationsRegistry() {
        List<GuardListener> all = listeners.stream().toList();
        assertTrue(all.stream().anyMatch(MpGuardMetrics.class::isInstance), all::toString);
        List<OutboxListener> outbox = outboxListeners.stream().toList();
        assertTrue(outbox.stream().anyMatch(MpOutboxMetrics.class::isInstance), outbox::toString);
    }
}
