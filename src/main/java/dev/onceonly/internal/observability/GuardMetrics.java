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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * OpenTelemetry metrics of the guard:
 * <ul>
 *   <li>{@code onceonly.messages} — messages by {@code consumer}, {@code outcome} and {@code layer}
 *       (a DUPLICATE caught by the claim store or by the ledger); FAILED ones also by
 *       {@code retryable} ({@code false}: the consumer's retry rule says another delivery cannot
 *       succeed, {@link GuardEvent#retryable()});</li>
 *   <li>{@code onceonly.guard.duration} — seconds the guard itself spent per message (claim, ledger
 *       insert, finalisation; the handler excluded), by consumer and outcome;</li>
 *   <li>{@code onceonly.lease.renewals}, {@code onceonly.lease.lost}, {@code onceonly.store.errors}
 *       (by operation) and {@code onceonly.ledger.decisions} (by decision).</li>
 * </ul>
 * Attribute sets are built once per consumer at startup, so recording allocates nothing.
 */
public final class GuardMetrics implements GuardListener {

    static final AttributeKey<String> CONSUMER = AttributeKey.stringKey("consumer");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("outcome");
    static final AttributeKey<String> LAYER = AttributeKey.stringKey("layer");
    static final AttributeKey<String> OPERATION = AttributeKey.stringKey("operation");
    static final AttributeKey<String> DECISION = AttributeKey.stringKey("decision");
    static final AttributeKey<Boolean> RETRYABLE = AttributeKey.booleanKey("retryable");

    /** Pre-built attribute sets of one consumer. */
    private static final class ConsumerAttributes {
        final Attributes consumer;
        final Attributes[][] byOutcomeAndLayer = new Attributes[Outcome.values().length][Layer.values().length];
        /** FAILED is counted by whether it may be retried: a message not worth retrying is dead-lettered at once. */
        final Attributes[] failedByLayerNotRetryable = new Attributes[Layer.values().length];
        final Attributes[] byOutcome = new Attributes[Outcome.values().length];
        final Attributes[] byDecision = new Attributes[LedgerDecision.values().length];
        final Map<String, Attributes> byOperation = new HashMap<>();

        ConsumerAttributes(String name) {
            consumer = Attributes.of(CONSUMER, name);
            for (Outcome o : Outcome.values()) {
                byOutcome[o.ordinal()] = Attributes.of(CONSUMER, name, OUTCOME, o.name());
                for (Layer l : Layer.values()) {
                    byOutcomeAndLayer[o.ordinal()][l.ordinal()] = o == Outcome.FAILED
                            ? Attributes.of(CONSUMER, name, OUTCOME, o.name(), LAYER, l.name(), RETRYABLE, true)
                            : Attributes.of(CONSUMER, name, OUTCOME, o.name(), LAYER, l.name());
                }
            }
            for (Layer l : Layer.values()) {
                failedByLayerNotRetryable[l.ordinal()] = Attributes.of(CONSUMER, name, OUTCOME, Outcome.FAILED.name(),
                        LAYER, l.name(), RETRYABLE, false);
            }
            for (LedgerDecision d : LedgerDecision.values()) {
                byDecision[d.ordinal()] = Attributes.of(CONSUMER, name, DECISION, d.name());
            }
            for (String op : new String[] {"claim", "complete", "release", "extend"}) {
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
        messages = meter.counterBuilder("onceonly.messages")
                .setDescription("Messages guarded, by consumer, outcome and the layer that decided").build();
        guardSeconds = meter.histogramBuilder("onceonly.guard.duration").setUnit("s")
                .setDescription("Time the guard itself spent on a message, handler excluded").build();
        renewals = meter.counterBuilder("onceonly.lease.renewals").setDescription("Claim leases renewed by the watchdog").build();
        lost = meter.counterBuilder("onceonly.lease.lost").setDescription("Claims lost while their handler ran").build();
        storeErrors = meter.counterBuilder("onceonly.store.errors").setDescription("Claim store failures, by operation").build();
        ledgerDecisions = meter.counterBuilder("onceonly.ledger.decisions").setDescription("Ledger insert answers, by decision").build();
        knownConsumers.forEach(c -> consumers.put(c, new ConsumerAttributes(c)));
    }

    private ConsumerAttributes of(String consumer) {
        ConsumerAttributes a = consumers.get(consumer);
        return a != null ? a : consumers.computeIfAbsent(consumer, ConsumerAttributes::new);
    }

    @Override
    public void onOutcome(GuardEvent e) {
        ConsumerAttributes a = of(e.consumer());
        messages.add(1, e.outcome() == Outcome.FAILED && !e.retryable()
                ? a.failedByLayerNotRetryable[e.layer().ordinal()]
                : a.byOutcomeAndLayer[e.outcome().ordinal()][e.layer().ordinal()]);
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
