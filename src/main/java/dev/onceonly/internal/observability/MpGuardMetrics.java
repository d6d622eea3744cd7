package dev.onceonly.internal.observability;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Ledger.LedgerDecision;
import org.eclipse.microprofile.metrics.Counter;
import org.eclipse.microprofile.metrics.Metadata;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.MetricUnits;
import org.eclipse.microprofile.metrics.Tag;
import org.eclipse.microprofile.metrics.Timer;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;

/**
 * The guard's metrics on MicroProfile Metrics (Liberty's {@code mpMetrics-5.1} serves them on
 * {@code /metrics}), the same measurements as {@link GuardMetrics} under the names and tags of
 * {@link MetricCatalogue}. A series is registered the first time it is recorded, so {@code /metrics}
 * lists only the combinations that happened; after that, recording looks it up in an array.
 */
public final class MpGuardMetrics implements GuardListener {

    private static final int LAYERS = Layer.values().length;

    /** The registered metrics of one consumer, filled in as they are first used. */
    private final class ConsumerMetrics {
        final String name;
        /** By outcome, layer and retryability: index {@code (outcome * LAYERS + layer) * 2 + retryable}. */
        final Lazy<Counter> messages;
        final Lazy<Timer> guard;
        final Lazy<Counter> decisions;
        final Counter renewals;
        final Counter lost;
        final Map<String, Counter> storeErrors = new ConcurrentHashMap<>();

        ConsumerMetrics(String name) {
            this.name = name;
            Outcome[] outcomes = Outcome.values();
            Layer[] layers = Layer.values();
            messages = new Lazy<>(outcomes.length * LAYERS * 2, i -> registry.counter(metadata(MetricCatalogue.MESSAGES),
                    tag(MetricCatalogue.Tag.CONSUMER, name), tag(MetricCatalogue.Tag.OUTCOME, outcomes[i / 2 / LAYERS].name()),
                    tag(MetricCatalogue.Tag.LAYER, layers[i / 2 % LAYERS].name()), tag(MetricCatalogue.Tag.RETRYABLE, Boolean.toString(i % 2 == 1))));
            guard = new Lazy<>(outcomes.length, i -> registry.timer(metadata(MetricCatalogue.GUARD_DURATION),
                    tag(MetricCatalogue.Tag.CONSUMER, name), tag(MetricCatalogue.Tag.OUTCOME, outcomes[i].name())));
            LedgerDecision[] ledger = LedgerDecision.values();
            decisions = new Lazy<>(ledger.length, i -> registry.counter(metadata(MetricCatalogue.LEDGER_DECISIONS),
                    tag(MetricCatalogue.Tag.CONSUMER, name), tag(MetricCatalogue.Tag.DECISION, ledger[i].name())));
            // Lease renewals are the health of every long handler: their series exist from the start.
            renewals = registry.counter(metadata(MetricCatalogue.LEASE_RENEWALS), tag(MetricCatalogue.Tag.CONSUMER, name));
            lost = registry.counter(metadata(MetricCatalogue.LEASE_LOST), tag(MetricCatalogue.Tag.CONSUMER, name));
        }

        Counter storeErrors(String operation) {
            Counter c = storeErrors.get(operation);
            return c != null ? c : storeErrors.computeIfAbsent(operation, op -> registry.counter(
                    metadata(MetricCatalogue.STORE_ERRORS), tag(MetricCatalogue.Tag.CONSUMER, name), tag(MetricCatalogue.Tag.OPERATION, op)));
        }
    }

    /** Metrics registered on first use, by index; a race registers twice, and the registry returns the same metric. */
    static final class Lazy<M> {
        private final AtomicReferenceArray<M> metrics;
        private final IntFunction<M> register;

        Lazy(int size, IntFunction<M> register) {
            this.metrics = new AtomicReferenceArray<>(size);
            this.register = register;
        }

        M get(int index) {
            M m = metrics.get(index);
            if (m == null) {
                m = register.apply(index);
                metrics.set(index, m);
            }
            return m;
        }
    }

    private final MetricRegistry registry;
    private final Map<String, ConsumerMetrics> consumers = new ConcurrentHashMap<>();

    /**
     * Registers the metrics every known consumer has from the start on {@code registry}.
     *
     * @param registry       the application's registry
     * @param knownConsumers the consumers found at deployment
     */
    public MpGuardMetrics(MetricRegistry registry, Collection<String> knownConsumers) {
        this.registry = registry;
        knownConsumers.forEach(c -> consumers.put(c, new ConsumerMetrics(c)));
    }

    /**
     * {@return the metadata of {@code metric}: its name, description and unit}
     *
     * @param metric the catalogued metric
     */
    static Metadata metadata(MetricCatalogue metric) {
        return Metadata.builder().withName(metric.otelName()).withDescription(metric.description())
                .withUnit(metric.type() == MetricCatalogue.Type.TIMER ? MetricUnits.SECONDS : MetricUnits.NONE).build();
    }

    static Tag tag(MetricCatalogue.Tag tag, String value) {
        return new Tag(tag.key(), value);
    }

    private ConsumerMetrics of(String consumer) {
        ConsumerMetrics m = consumers.get(consumer);
        return m != null ? m : consumers.computeIfAbsent(consumer, ConsumerMetrics::new);
    }

    @Override
    public void onOutcome(GuardEvent e) {
        ConsumerMetrics m = of(e.consumer());
        m.messages.get((e.outcome().ordinal() * LAYERS + e.layer().ordinal()) * 2 + (e.retryable() ? 1 : 0)).inc();
        m.guard.get(e.outcome().ordinal()).update(Duration.ofNanos(e.guardNanos()));
    }

    @Override
    public void onLeaseRenewed(String consumer) {
        of(consumer).renewals.inc();
    }

    @Override
    public void onLeaseLost(String consumer) {
        of(consumer).lost.inc();
    }

    @Override
    public void onStoreError(String consumer, String operation) {
        of(consumer).storeErrors(operation).inc();
    }

    @Override
    public void onLedgerDecision(String consumer, LedgerDecision decision) {
        of(consumer).decisions.get(decision.ordinal()).inc();
    }
}
