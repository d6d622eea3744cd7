package dev.onceonly.internal.observability;

import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.outbox.OutboxStore;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Timer;

import java.time.Duration;

/**
 * The outbox's metrics on MicroProfile Metrics, the same measurements as {@link OutboxMetrics} under
 * the names and tags of {@link MetricCatalogue}. The outbox's series exist from the start: an
 * application that uses the outbox wants its pending and parked rows watched before anything happens.
 */
public final class MpOutboxMetrics implements OutboxListener {

    private final Counter relayedFast;
    private final Counter relayedSwept;
    private final Counter refusedParked;
    private final Counter refusedNotParked;
    private final Timer secondsFast;
    private final Timer secondsSwept;
    private volatile OutboxStore.Counts counts = new OutboxStore.Counts(0, 0);

    /**
     * Registers the outbox's metrics on {@code registry}.
     *
     * @param registry the application's registry
     */
    public MpOutboxMetrics(MetricRegistry registry) {
        relayedFast = registry.counter(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_RELAYED),
                MpGuardMetrics.tag(MetricCatalogue.Tag.PATH, OutboxMetrics.AFTER_COMMIT));
        relayedSwept = registry.counter(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_RELAYED),
                MpGuardMetrics.tag(MetricCatalogue.Tag.PATH, OutboxMetrics.SWEPT));
        refusedParked = registry.counter(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_REFUSED),
                MpGuardMetrics.tag(MetricCatalogue.Tag.PARKED, "true"));
        refusedNotParked = registry.counter(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_REFUSED),
                MpGuardMetrics.tag(MetricCatalogue.Tag.PARKED, "false"));
        secondsFast = registry.timer(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_RELAY_DURATION),
                MpGuardMetrics.tag(MetricCatalogue.Tag.PATH, OutboxMetrics.AFTER_COMMIT));
        secondsSwept = registry.timer(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_RELAY_DURATION),
                MpGuardMetrics.tag(MetricCatalogue.Tag.PATH, OutboxMetrics.SWEPT));
        registry.gauge(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_PENDING), this, m -> m.counts.pending());
        registry.gauge(MpGuardMetrics.metadata(MetricCatalogue.OUTBOX_PARKED), this, m -> m.counts.parked());
    }

    @Override
    public void relayed(int rows, boolean sweep, Duration[] sinceWrite) {
        (sweep ? relayedSwept : relayedFast).inc(rows);
        Timer seconds = sweep ? secondsSwept : secondsFast;
        for (Duration d : sinceWrite) {
            seconds.update(d);
        }
    }

    @Override
    public void refused(boolean parked) {
        (parked ? refusedParked : refusedNotParked).inc();
    }

    @Override
    public void counted(OutboxStore.Counts now) {
        counts = now;
    }
}
