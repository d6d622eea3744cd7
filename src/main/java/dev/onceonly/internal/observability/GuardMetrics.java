package dev.onceonly.internal.observability;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger.LedgerDecision;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * OpenTelemetry metrics of the guard, named and tagged as {@link MetricCatalogue} lists them:
 * {@code onceonly.messages} (by {@code consumer}, {@code outcome}, {@code layer} and {@code retryable}),
 * {@code onceonly.guard.duration}, {@code onceonly.lease.renewals}, {@code onceonly.lease.lost},
 * {@code onceonly.store.errors} and {@code onceonly.ledger.decisions}.
 * Attribute sets are built once per consumer at startup, so recording allocates nothing.
 */
public final class GuardMetrics implements GuardListener {

    private static final AttributeKey<String> CONSUMER = key(MetricCatalogue.Tag.CONSUMER);
    private static final AttributeKey<String> OUTCOME = key(MetricCatalogue.Tag.OUTCOME);
    private static final AttributeKey<String> LAYER = key(MetricCatalogue.Tag.LAYER);
    private static final AttributeKey<String> OPERATION = key(MetricCatalogue.Tag.OPERATION);
    private static final AttributeKey<String> DECISION = key(MetricCatalogue.Tag.DECISION);
    /** A string, as MicroProfile Metrics' tags are: the two adapters' series look alike. */
    private static final AttributeKey<String> RETRYABLE = key(MetricCatalogue.Tag.RETRYABLE);
    /** The claim store's operations {@link GuardListener#onStoreError} names. */
    static final List<String> OPERATIONS = List.of("claim", "complete", "release", "extend");

    static AttributeKey<String> key(MetricCatalogue.Tag tag) {
        return AttributeKey.stringKey(tag.key());
    }

    /** Pre-built attribute sets of one consumer. */
    private static final class ConsumerAttributes {
        final Attributes consumer;
        /** By outcome, layer and retryability ({@code [1]}: retryable). */
        final Attributes[][][] messages = new Attributes[Outcome.values().length][Layer.values().length][2];
        final Attributes[] byOutcome = new Attributes[Outcome.values().length];
        final Attributes[] byDecision = new Attributes[LedgerDecision.values().length];
        final Map<String, Attributes> byOperation = new HashMap<>();

        ConsumerAttributes(String name) {
            consumer = Attributes.of(CONSUMER, name);
            for (Outcome o : Outcome.values()) {
                byOutcome[o.ordinal()] = Attributes.of(CONSUMER, name, OUTCOME, o.name());
                for (Layer l : Layer.values()) {
                    for (int r = 0; r < 2; r++) {
                        messages[o.ordinal()][l.ordinal()][r] = Attributes.of(CONSUMER, name, OUTCOME, o.name(), LAYER, l.name(),
                                RETRYABLE, Boolean.toString(r == 1));
                    }
                }
            }
            for (LedgerDecision d : LedgerDecision.values()) {
                byDecision[d.ordinal()] = Attributes.of(CONSUMER, name, DECISION, d.name());
            }
            for (String op : OPERATIONS) {
                byOperation.put(op, Attributes.of(CONSUMER, name, OPERATION, op));
            }
        }
    }

    private final LongCounter messages;
    private final DoubleHistogram guardSeconds;
    private final LongCounter renewals;
    private final LongCounter lost;
    private final LongCounter storeErrors;
    private final LongCounter ledgerDecisions;
    private final Map<String, ConsumerAttributes> consumers = new ConcurrentHashMap<>();

    /**
     * Creates the instruments on {@code meter}.
     *
     * @param meter          OnceOnly's meter
     * @param knownConsumers the consumers found at deployment
     */
    public GuardMetrics(Meter meter, Collection<String> knownConsumers) {
        messages = counter(meter, MetricCatalogue.MESSAGES);
        guardSeconds = histogram(meter, MetricCatalogue.GUARD_DURATION);
        renewals = counter(meter, MetricCatalogue.LEASE_RENEWALS);
        lost = counter(meter, MetricCatalogue.LEASE_LOST);
        storeErrors = counter(meter, MetricCatalogue.STORE_ERRORS);
        ledgerDecisions = counter(meter, MetricCatalogue.LEDGER_DECISIONS);
        knownConsumers.forEach(c -> consumers.put(c, new ConsumerAttributes(c)));
    }

    static LongCounter counter(Meter meter, MetricCatalogue metric) {
        return meter.counterBuilder(metric.otelName()).setDescription(metric.description()).build();
    }

    static DoubleHistogram histogram(Meter meter, MetricCatalogue metric) {
        return meter.histogramBuilder(metric.otelName()).setUnit(metric.unit()).setDescription(metric.description()).build();
    }

    private ConsumerAttributes of(String consumer) {
        ConsumerAttributes a = consumers.get(consumer);
        return a != null ? a : consumers.computeIfAbsent(consumer, ConsumerAttributes::new);
    }

    @Override
    public void onOutcome(GuardEvent e) {
        ConsumerAttributes a = of(e.consumer());
        messages.add(1, a.messages[e.outcome().ordinal()][e.layer().ordinal()][e.retryable() ? 1 : 0]);
        guardSeconds.record(e.guardNanos() / 1e9, a.byOutcome[e.outcome().ordinal()]);
    }

    @Override
    public void onLeaseRenewed(String consumer) {
        renewals.add(1, of(consumer).consumer);
    }

    @Override
    public void onLeaseLost(String consumer) {
        lost.add(1, of(consumer).consumer);
    }

    @Override
    public void onStoreError(String consumer, String operation) {
        Attributes attrs = of(consumer).byOperation.get(operation);
        storeErrors.add(1, attrs != null ? attrs : Attributes.of(CONSUMER, consumer, OPERATION, operation));
    }

    @Override
    public void onLedgerDecision(String consumer, LedgerDecision decision) {
        ledgerDecisions.add(1, of(consumer).byDecision[decision.ordinal()]);
    }
}
