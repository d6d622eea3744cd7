package dev.onceonly.engine;

import dev.onceonly.api.GuardEvent;

/** Told the final outcome of every guarded message (metrics, CDI events, tests). Must be fast and must not throw. */
@FunctionalInterface
public interface GuardListener {

    void onOutcome(GuardEvent event);

    GuardListener NONE = event -> { };
}
