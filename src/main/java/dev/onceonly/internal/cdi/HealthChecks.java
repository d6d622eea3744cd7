package dev.onceonly.internal.cdi;

import dev.onceonly.spi.HealthProbe;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.CDI;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

import java.util.Optional;

/**
 * MicroProfile Health checks, added as beans by the extension only when the MicroProfile
 * Health API is deployed. Not a bean class itself: a bean class naming {@link HealthCheck} in its
 * signatures made Liberty's injection engine fail on it (CWNEN0049W) in applications without the
 * feature, even when the bean was vetoed.
 *
 * <p>Readiness asks every {@link HealthProbe} of a part in use (claim store, ledger datasource, outbox,
 * broker channels) and names each part that failed; the producer of a part not in use gives none
 * ({@code null}), and the part is not shown. The two checks are named apart
 * ({@code onceonly-readiness}, {@code onceonly-liveness}) so a monitor tells which answered.
 * Liveness deliberately does not look at Redis or the broker: a blip
 * there must make the instance not ready, never restart it.
 */
final class HealthChecks {

    private HealthChecks() {
    }

    static void register(AfterBeanDiscovery abd) {
        abd.addBean().beanClass(HealthChecks.class).types(HealthCheck.class, Object.class)
                .qualifiers(Readiness.Literal.INSTANCE).createWith(ctx -> (HealthCheck) HealthChecks::readiness);
        abd.addBean().beanClass(HealthChecks.class).types(HealthCheck.class, Object.class)
                .qualifiers(Liveness.Literal.INSTANCE).createWith(ctx -> (HealthCheck) HealthChecks::liveness);
    }

    private static HealthCheckResponse readiness() {
        HealthCheckResponseBuilder b = HealthCheckResponse.named("onceonly-readiness").up();
        for (HealthProbe probe : CDI.current().select(HealthProbe.class)) {
            if (probe == null) {
                continue;
            }
            Optional<String> problem = probe.problem();
            b.withData(probe.name(), problem.map(p -> "DOWN: " + p).orElse("UP"));
            probe.details().forEach(b::withData);
            if (problem.isPresent()) {
                b.down();
            }
        }
        return b.build();
    }

    private static HealthCheckResponse liveness() {
        Optional<String> store = CDI.current().select(GuardLife.class).get().storeName();
        return HealthCheckResponse.named("onceonly-liveness").status(store.isPresent())
                .withData("store", store.orElse("not started")).build();
    }
}
