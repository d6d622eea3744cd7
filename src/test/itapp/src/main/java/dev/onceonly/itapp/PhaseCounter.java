package dev.onceonly.itapp;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.spi.GuardListener;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An application's own {@link GuardListener} bean (the guard finds it): counts the guard's phases
 * per consumer, so the tests can tell that claims were taken ahead on Liberty.
 */
@ApplicationScoped
public class PhaseCounter implements GuardListener {

    private final Map<String, AtomicInteger> phases = new ConcurrentHashMap<>();

    @Override
    public void onOutcome(GuardEvent event) {
    }

    @Override
    public Phase startPhase(String consumer, String phase) {
        phases.computeIfAbsent(consumer + "|" + phase, k -> new AtomicInteger()).incrementAndGet();
        return Phase.NONE;
    }

    int count(String consumer, String phase) {
        AtomicInteger n = phases.get(consumer + "|" + phase);
        return n == null ? 0 : n.get();
    }
}
