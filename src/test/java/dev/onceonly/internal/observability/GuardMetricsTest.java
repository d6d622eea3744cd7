package dev.onceonly.internal.observability;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What {@code onceonly.messages} records per outcome, on a meter that writes down every addition. */
class GuardMetricsTest {

    /** Additions to {@code onceonly.messages}: their attributes, as a map of names to values. */
    private final List<Map<String, Object>> messages = new CopyOnWriteArrayList<>();

    /**
     * A meter of proxies: builders return themselves, built instruments record {@code add(long,
     * Attributes)} on the counter named {@code onceonly.messages} and ignore everything else.
     */
    private Meter recordingMeter() {
        return instrument(Meter.class, null);
    }

    private <T> T instrument(Class<T> type, String name) {
        return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (method.getName().equals("add") && args.length == 2 && args[1] instanceof Attributes a
                    && "onceonly.messages".equals(name)) {
                Map<String, Object> seen = new java.util.TreeMap<>();
                a.forEach((k, v) -> seen.put(k.getKey(), v));
                messages.add(seen);
                return null;
            }
            Class<?> returns = method.getReturnType();
            if (returns.isInterface()) {
                String named = args != null && args.length == 1 && args[0] instanceof String s && name == null ? s : name;
                return instrument(returns, named);
            }
            return null;
        }));
    }

    /** Every series carries {@code retryable}, as the catalogue lists it: MicroProfile Metrics needs one set of tags per name. */
    @Test
    void messagesAreCountedByWhetherTheyMayBeRetried() {
        GuardMetrics metrics = new GuardMetrics(recordingMeter(), List.of("orders"));
        metrics.onOutcome(new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "d", "not retried: x", 1, false));
        metrics.onOutcome(new GuardEvent("orders", Outcome.FAILED, Layer.NONE, "d", "handler failed", 1, true));
        metrics.onOutcome(new GuardEvent("orders", Outcome.PROCESSED, Layer.NONE, "d", "", 1));
        metrics.onOutcome(new GuardEvent("late", Outcome.FAILED, Layer.NONE, "d", "not retried: x", 1, false));
        metrics.onOutcome(new GuardEvent("orders", Outcome.CONFLICT, Layer.CLAIM_STORE, "d", "other body", 1));

        assertEquals(List.of(
                Map.of("consumer", "orders", "outcome", "FAILED", "layer", "NONE", "retryable", "false"),
                Map.of("consumer", "orders", "outcome", "FAILED", "layer", "NONE", "retryable", "true"),
                Map.of("consumer", "orders", "outcome", "PROCESSED", "layer", "NONE", "retryable", "true"),
                Map.of("consumer", "late", "outcome", "FAILED", "layer", "NONE", "retryable", "false"),
                Map.of("consumer", "orders", "outcome", "CONFLICT", "layer", "CLAIM_STORE", "retryable", "false")), messages);
    }
}
