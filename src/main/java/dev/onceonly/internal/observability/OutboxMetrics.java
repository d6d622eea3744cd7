package dev.onceonly.internal.observability;

import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.outbox.OutboxStore;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;

import java.time.Duration;

/**
 * The outbox's metrics: {@code onceonly.outbox.relayed} (rows published and marked sent, by path),
 * {@code onceonly.outbox.refused} (broker refusals, and whether the row is now parked),
 * {@code onceonly.outbox.relay.duration} (from a row's commit, or its write for swept rows, to the
 * broker's confirm), and the gauges {@code onceonly.outbox.pending} and {@code onceonly.outbox.parked}
 * as the last sweep counted them.
 */
public final class OutboxMetrics implements OutboxListener {

    private static final AttributeKey<String> PATH = AttributeKey.stringKey("path");
    private static final AttributeKey<Boolean> PARKED = AttributeKey.booleanKey("parked");
    private static final Attributes FAST = Attributes.of(PATH, "after-commit");
    private static final Attributes SWEEP = Attributes.of(PATH, "sweep");
    private static final Attributes NOW_PARKED = Attributes.of(PARKED, true);
    private static final Attributes NOT_PARKED = Attributes.of(PARKED, false);

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
        relayed = meter.counterBuilder("onceonly.outbox.relayed").setDescription("Outbox rows published and marked sent").build();
        refused = meter.counterBuilder("onceonly.outbox.refused").setDescription("Outbox rows the broker refused").build();
        seconds = meter.histogramBuilder("onceonly.outbox.relay.duration").setUnit("s")
                .setDescription("From an outbox row's commit to the broker's confirm").build();
        meter.gaugeBuilder("onceonly.outbox.pending").ofLongs().setDescription("Outbox rows waiting to be published")
                .buildWithCallback(m -> m.record(counts.pending()));
        meter.gaugeBuilder("onceonly.outbox.parked").ofLongs().setDescription("Outbox rows parked after repeated refusals")
                .buildWithCallback(m -> m.record(counts.parked()));
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
