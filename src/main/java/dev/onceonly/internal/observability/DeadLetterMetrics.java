package dev.onceonly.internal.observability;

import dev.onceonly.internal.rabbitmq.DeadLetterListener;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connector's dead letters on OpenTelemetry: {@code onceonly.dead.letters} by {@code channel} and
 * {@code reason}, as {@link MetricCatalogue} lists it. A channel's attribute sets are built on its
 * first dead letter.
 */
public final class DeadLetterMetrics implements DeadLetterListener {

    private static final AttributeKey<String> CHANNEL = GuardMetrics.key(MetricCatalogue.Tag.CHANNEL);
    private static final AttributeKey<String> REASON = GuardMetrics.key(MetricCatalogue.Tag.REASON);

    private final LongCounter deadLetters;
    /** By channel, then by reason's ordinal. */
    private final Map<String, Attributes[]> attributes = new ConcurrentHashMap<>();

    /**
     * Creates the counter on {@code meter}.
     *
     * @param meter OnceOnly's meter
     */
    public DeadLetterMetrics(Meter meter) {
        deadLetters = GuardMetrics.counter(meter, MetricCatalogue.DEAD_LETTERS);
    }

    @Override
    public void deadLettered(String channel, Reason reason) {
        Attributes[] byReason = attributes.computeIfAbsent(channel, c -> {
            Attributes[] a = new Attributes[Reason.values().length];
            for (Reason r : Reason.values()) {
                a[r.ordinal()] = Attributes.of(CHANNEL, c, REASON, r.tag());
            }
            return a;
        });
        deadLetters.add(1, byReason[reason.ordinal()]);
    }
}
