package dev.onceonly.spi;

import java.util.Map;
import java.util.Optional;

/**
 * One part OnceOnly depends on (the claim store, the ledger's datasource, a broker connection),
 * reported by OnceOnly's readiness check. CDI beans of this type are picked up automatically.
 */
public interface HealthProbe {

    /** {@return the short name of the part, e.g. {@code redis}, {@code ledger-datasource}, {@code rabbitmq:orders}} */
    String name();

    /**
     * Checks the part now, quickly (bounded by the part's own timeouts).
     *
     * @return empty when usable, else why not; never a secret
     */
    Optional<String> problem();

    /**
     * What readiness shows about the part besides UP or DOWN, as extra entries (for example how many
     * outbox rows are parked). Quick, never a secret.
     *
     * @return entry name to value; empty by default
     */
    default Map<String, String> details() {
        return Map.of();
    }

    /**
     * A probe named {@code name} that asks {@code check}.
     *
     * @param name the part's short name
     * @param check answers as {@link #problem()} does
     * @return the probe
     */
    static HealthProbe of(String name, java.util.function.Supplier<Optional<String>> check) {
        return new HealthProbe() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Optional<String> problem() {
                return check.get();
            }
        };
    }
}
