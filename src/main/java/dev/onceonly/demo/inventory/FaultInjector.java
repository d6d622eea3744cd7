package dev.onceonly.demo.inventory;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Makes a share of orders fail on their first attempt ({@code demo.fail-first-attempt-percent},
 * default 0), to show that a failed attempt is rolled back, released and retried, never remembered
 * as done. Which orders fail is decided by the order id, so it is repeatable.
 */
@ApplicationScoped
public class FaultInjector {

    @Inject
    @ConfigProperty(name = "demo.fail-first-attempt-percent", defaultValue = "0")
    int percent;

    private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

    void maybeFailFirstAttempt(String orderId) {
        if (percent > 0 && Math.floorMod(orderId.hashCode(), 100) < percent && failedOnce.add(orderId)) {
            throw new IllegalStateException("injected failure on the first attempt of an order");
        }
    }
}
