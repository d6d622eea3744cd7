package dev.onceonly.demo.inventory;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Faults to watch the guard at work, off by default (MicroProfile Config, so also environment
 * variables such as {@code DEMO_FAIL_FIRST_ATTEMPT_PERCENT}):
 * <ul>
 *   <li>{@code demo.fail-first-attempt-percent} (0–100): that share of orders fails on its first
 *       attempt, to show that a failed attempt is rolled back, released and retried, never
 *       remembered as done;</li>
 *   <li>{@code demo.slow-handler-percent} (0–100, decimals allowed) and {@code demo.slow-handler-delay}
 *       (ISO-8601, e.g. {@code PT3S}, {@code PT0.5S}): that share of orders holds its handler this long
 *       after taking stock and before calling shipping. Longer than the lease and with the claim
 *       store unreachable meanwhile (so the lease cannot be renewed), the claim lapses while the
 *       handler still runs: the lease-loss path.</li>
 * </ul>
 * Which orders are hit is decided by the order id (separately for each fault), so it is repeatable
 * and every delivery of a slow order is slow.
 */
@ApplicationScoped
public class FaultInjector {

    @Inject
    @ConfigProperty(name = "demo.fail-first-attempt-percent", defaultValue = "0")
    int percent;

    @Inject
    @ConfigProperty(name = "demo.slow-handler-percent", defaultValue = "0")
    double slowPercent;

    /** Converted by MicroProfile Config ({@link Duration#parse}); an invalid value stops deployment naming the property. */
    @Inject
    @ConfigProperty(name = "demo.slow-handler-delay", defaultValue = "PT5S")
    Duration slowDelay;
    private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

    @PostConstruct
    void validate() {
        if (percent < 0 || percent > 100) {
            throw new IllegalArgumentException("demo.fail-first-attempt-percent must be 0..100, got " + percent);
        }
        if (!(slowPercent >= 0 && slowPercent <= 100)) {
            throw new IllegalArgumentException("demo.slow-handler-percent must be 0..100, got " + slowPercent);
        }
        if (slowDelay.isNegative()) {
            throw new IllegalArgumentException("demo.slow-handler-delay must not be negative, got " + slowDelay);
        }
    }

    /** Creates the bean at startup, so a bad value stops the application instead of failing orders. */
    void atStartup(@Observes @Initialized(ApplicationScoped.class) Object ignored) {
        // @PostConstruct has run.
    }

    void maybeFailFirstAttempt(String orderId) {
        if (percent > 0 && Math.floorMod(orderId.hashCode(), 100) < percent && failedOnce.add(orderId)) {
            throw new IllegalStateException("injected failure on the first attempt of an order");
        }
    }

    void maybeSlowDown(String orderId) {
        if (slowPercent > 0 && Math.floorMod(orderId.hashCode() * 31 + 17, 10_000) < slowPercent * 100) {
            try {
                Thread.sleep(slowDelay.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while slowed down on purpose", e);
            }
        }
    }
}
