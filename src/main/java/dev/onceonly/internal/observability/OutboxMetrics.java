package dev.onceonly.internal.observability;

import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.outbox.OutboxStore;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongGaugeBuilder;
import io.opentelemetry.api.metrics.Meter;

import java.time.Duration;

/**
 * The outbox's OpenTelemetry metrics, named and tagged as {@link MetricCatalogue} lists them:
 * {@code onceonly.outbox.relayed} (by path), {@code onceonly.outbox.refused} (by whether the row is
 * now parked), {@code onceonly.outbox.relay.duration}, and the gauges {@code onceonly.outbox.pending}
 * and {@code onceonly.outbox.parked} as the last sweep counted them.
 */
public final class OutboxMetrics implements OutboxListener {

    /** The {@code path} of a row published right after its transaction. */
    static final String AFTER_COMMIT = "after-commit";
    /** The {@code path} of a row the sweep found. */
    static final String SWEPT = "sweep";

    private static final AttributeKey<String> PATH = GuardMetrics.key(MetricCatalogue.Tag.PATH);
    private static final AttributeKey<String> PARKED = GuardMetrics.key(MetricCatalogue.Tag.PARKED);
    private static final Attributes FAST = Attributes.of(PATH, AFTER_COMMIT);
    private static final Attributes SWEEP = Attributes.of(PATH, SWEPT);
    private static final Attributes NOW_PARKED = Attributes.of(PARKED, "true");
    private static final Attributes NOT_PARKED = Attributes.of(PARKED, "false");

    private final LongCounter relayed;
    private final LongCounter refused;
    private final DoubleHistogram seconds;
    private volatile OutboxStore.Counts counts = new OutboxStore.Counts(0, 0);

    /**
     * Creates the instruments on {@code meter}.
     *
     * @param meter OnceOnly's meter
     */
    public OutboxMetrics(Meter meter) {
        relayed = GuardMetrics.counter(meter, MetricCatalogue.OUTBOX_RELAYED);
        refused = GuardMetrics.counter(meter, MetricCatalogue.OUTBOX_REFUSED);
        seconds = GuardMetrics.histogram(meter, MetricCatalogue.OUTBOX_RELAY_DURATION);
        gauge(meter, MetricCatalogue.OUTBOX_PENDING).buildWithCallback(m -> m.record(counts.pending()));
        gauge(meter, MetricCatalogue.OUTBOX_PARKED).buildWithCallback(m -> m.record(counts.parked()));
    }

    private static LongGaugeBuilder gauge(Meter meter, MetricCatalogue metric) {
        return meter.gaugeBuilder(metric.otelName()).ofLongs().setDescription(metric.description());
    }

    @Override
    public void relayed(int rows, boolean sweep, Duration[] sinceWrite) {
        relayed.add(rows, sweep ? SWEEP : FAST);
        for (Duration d : sinceWrite) {
            seconds.record(d.toNanos() / 1e9, sweep ? SWEEP : FAST);
        }
    }

    @Override
    public void refused(boolean parked) {
        refused.add(1, parked ? NOW_PARKED : NOT_PARKED);
    }

    @Override
    public void counted(OutboxStore.Counts now) {
        counts = now;
    }
}
