package dev.onceonly.observability;

import dev.onceonly.cdi.OnceOnlyRuntime;
import dev.onceonly.spi.HealthProbe;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

import java.util.Optional;

/**
 * MicroProfile Health checks. Readiness asks every {@link HealthProbe} (claim store, ledger
 * datasource, broker connections) and names each part that failed. Liveness deliberately does not
 * look at Redis or the broker: a blip there must make the instance not ready, never restart it.
 * Vetoed when the MicroProfile Health API is not deployed.
 */
@ApplicationScoped
public class OnceOnlyHealth {

    @Inject
    OnceOnlyRuntime runtime;

    @Inject
    Instance<HealthProbe> probes;

    @Produces
    @Readiness
    HealthCheck readiness() {
        return () -> {
            HealthCheckResponseBuilder b = HealthCheckResponse.named("onceonly").up();
            for (HealthProbe probe : probes) {
                Optional<String> problem = probe.problem();
                b.withData(probe.name(), problem.map(p -> "DOWN: " + p).orElse("UP"));
                if (problem.isPresent()) {
                    b.down();
                }
            }
            return b.build();
        };
    }

    @Produces
    @Liveness
    HealthCheck liveness() {
        return () -> HealthCheckResponse.named("onceonly").status(runtime.store() != null)
                .withData("store", runtime.store() == null ? "not started" : runtime.store().name()).build();
    }
}
