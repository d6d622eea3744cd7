package dev.onceonly.internal.cdi;

import dev.onceonly.spi.Handover;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Readiness reports only the parts the application uses: with guarded consumers that keep no
 * ledger and nothing injecting the outbox, the outbox and the ledger are not there at all (their
 * runtimes are deployed, as they are in every application of the library).
 */
@EnableWeld
class ReadinessWeldTest {

    @BeforeAll
    static void configure() {
        System.setProperty("onceonly.store", "memory");
        HealthCheckResponse.setResponseProvider(Builder::new); // a server's MicroProfile Health implementation does this
    }

    @AfterAll
    static void unconfigure() {
        System.clearProperty("onceonly.store");
        HealthCheckResponse.setResponseProvider(null);
    }

    /** The plainest response builder, as a MicroProfile Health implementation provides one. */
    private static final class Builder extends HealthCheckResponseBuilder {
        private String name;
        private boolean up;
        private final Map<String, Object> data = new LinkedHashMap<>();

        @Override
        public HealthCheckResponseBuilder name(String name) {
            this.name = name;
            return this;
        }

        @Override
        public HealthCheckResponseBuilder withData(String key, String value) {
            data.put(key, value);
            return this;
        }

        @Override
        public HealthCheckResponseBuilder withData(String key, long value) {
            data.put(key, value);
            return this;
        }

        @Override
        public HealthCheckResponseBuilder withData(String key, boolean value) {
            data.put(key, value);
            return this;
        }

        @Override
        public HealthCheckResponseBuilder up() {
            return status(true);
        }

        @Override
        public HealthCheckResponseBuilder down() {
            return status(false);
        }

        @Override
        public HealthCheckResponseBuilder status(boolean up) {
            this.up = up;
            return this;
        }

        @Override
        public HealthCheckResponse build() {
            return new HealthCheckResponse(name, up ? HealthCheckResponse.Status.UP : HealthCheckResponse.Status.DOWN,
                    Optional.of(Map.copyOf(data)));
        }
    }

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(WeldInitiator.createWeld()
                    .addBeanClasses(GuardedBean.class, IdempotentMessageInterceptor.class, OnceOnlyRuntime.class,
                            OutboxRuntime.class, LedgerBeans.class, RequiresNewTransaction.class, Handover.class,
                            CurrentIdempotencyContext.class)
                    .addExtension(new OnceOnlyExtension()))
            .activate(ApplicationScoped.class)
            .build();

    @Inject
    @Readiness
    HealthCheck readiness;

    @Test
    void aPartNotInUseIsNotReported() {
        HealthCheckResponse response = readiness.call();
        assertEquals(HealthCheckResponse.Status.UP, response.getStatus());
        assertEquals(Map.of("claim-store:memory", "UP"), response.getData().orElseThrow());
    }
}
