package dev.onceonly.internal.observability;

import dev.onceonly.internal.rabbitmq.DeadLetterListener;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connector's dead letters on MicroProfile Metrics, the same counter as {@link DeadLetterMetrics}
 * under the name and tags of {@link MetricCatalogue}. A series is registered on its first dead letter,
 * so {@code /metrics} lists only the channels and reasons that happened.
 */
public final class MpDeadLetterMetrics implements DeadLetterListener {

    private final MetricRegistry registry;
    /** By {@code <channel>/<reason ordinal>}. */
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    /**
     * Records on {@code registry}.
     *
     * @param registry the application's registry
     */
    public MpDeadLetterMetrics(MetricRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void deadLettered(String channel, Reason reason) {
        counters.computeIfAbsent(channel + '/' + reason.ordinal(), k -> registry.counter(MpGuardMetrics.metadata(MetricCatalogue.DEAD_LETTERS),
                MpGuardMetrics.tag(MetricCatalogue.Tag.CHANNEL, channel), MpGuardMetrics.tag(MetricCatalogue.Tag.REASON, reason.tag()))).inc();
    }
}
