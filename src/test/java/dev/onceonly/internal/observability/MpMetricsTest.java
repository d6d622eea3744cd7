package dev.onceonly.internal.observability;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.rabbitmq.DeadLetterListener;
import dev.onceonly.spi.Ledger.LedgerDecision;
import org.eclipse.microprofile.metrics.Metadata;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.Tag;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the MicroProfile Metrics listeners register and record, on a registry that writes down every
 * metric by name and tags: the catalogue's names, each with the one set of tags the catalogue lists.
 */
class MpMetricsTest {

    /** Counts (a counter's increments, a timer's updates) by {@code name{tag=value,...}}, tags sorted. */
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    /** Gauges by name. */
    private final Map<String, Function<Object, Number>> gauges = new ConcurrentHashMap<>();
    private Object gaugeOwner;

    @SuppressWarnings("unchecked")
    private MetricRegistry registry() {
        return (MetricRegistry) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {MetricRegistry.class}, (p, m, args) -> {
            Metadata metadata = (Metadata) args[0];
            MetricCatalogue metric = Arrays.stream(MetricCatalogue.values()).filter(c -> c.otelName().equals(metadata.getName()))
                    .findFirst().orElseThrow(() -> new AssertionError("not catalogued: " + metadata.getName()));
            assertEquals(metric.description(), metadata.getDescription());
            if (m.getName().equals("gauge")) {
                gaugeOwner = args[1];
                gauges.put(metadata.getName(), (Function<Object, Number>) args[2]);
                return null;
            }
            Tag[] tags = (Tag[]) args[1];
            Map<String, String> byName = new TreeMap<>();
            for (Tag t : tags) {
                byName.put(t.getTagName(), t.getTagValue());
            }
            assertEquals(metric.tags().stream().map(MetricCatalogue.Tag::key).collect(Collectors.toSet()), byName.keySet(), metadata.getName());
            AtomicLong count = counts.computeIfAbsent(metadata.getName() + byName, k -> new AtomicLong());
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {m.getReturnType()}, (q, call, a) -> {
                switch (call.getName()) {
                    case "inc" -> count.addAndGet(a == null ? 1 : (Long) a[0]);
                    case "update" -> count.incrementAndGet();
                    default -> throw new AssertionError(call.getName());
                }
                return null;
            });
        });
    }

    private long count(String name, String tags) {
        AtomicLong c = counts.get(name + tags);
        assertTrue(c != null, name + tags + " is not registered: " + counts.keySet());
        return c.get();
    }

    @Test
    void theGuardsMeasurementsUnderTheCataloguesNamesAndTags() {
        MpGuardMetrics metrics = new MpGuardMetrics(registry(), Set.of("orders"));
        assertEquals(0, count("onceonly.lease.renewals", "{consumer=orders}"), "a known consumer's leases are there from the start");
        metrics.onOutcome(new GuardEvent("orders", Outcome.PROCESSED, Layer.NONE, "d", "", 1_000));
        metrics.onOutcome(new GuardEvent("orders", Outcome.DUPLICATE, Layer.LEDGER, "d", "", 1_000));
        metrics.onOutcome(new GuardEvent("orders", Outcome.DUPLICATE, Layer.LEDGER, "d", "", 1_000));
        metrics.onOutcome(new GuardEvent("late", Outcome.FAILED, Layer.NONE, "d", "not retried: x", 1_000, false));
        metrics.onLeaseRenewed("orders");
        metrics.onStoreError("orders", "extend");
        metrics.onLedgerDecision("orders", LedgerDecision.DUPLICATE);

        assertEquals(1, count("onceonly.messages", "{consumer=orders, layer=NONE, outcome=PROCESSED, retryable=true}"));
        assertEquals(2, count("onceonly.messages", "{consumer=orders, layer=LEDGER, outcome=DUPLICATE, retryable=true}"));
        assertEquals(1, count("onceonly.messages", "{consumer=late, layer=NONE, outcome=FAILED, retryable=false}"));
        assertEquals(2, count("onceonly.guard.duration", "{consumer=orders, outcome=DUPLICATE}"));
        assertEquals(1, count("onceonly.lease.renewals", "{consumer=orders}"));
        assertEquals(1, count("onceonly.store.errors", "{consumer=orders, operation=extend}"));
        assertEquals(1, count("onceonly.ledger.decisions", "{consumer=orders, decision=DUPLICATE}"));
        assertEquals(12, counts.size(), "only what happened is registered, beyond each consumer's two lease series: " + counts.keySet());
    }

    @Test
    void theOutboxsMeasurementsAndGauges() {
        MpOutboxMetrics metrics = new MpOutboxMetrics(registry());
        metrics.relayed(2, false, new Duration[] {Duration.ofMillis(3), Duration.ofMillis(4)});
        metrics.relayed(1, true, new Duration[] {Duration.ofMillis(5)});
        metrics.refused(true);
        metrics.counted(new OutboxStore.Counts(7, 1));

        assertEquals(2, count("onceonly.outbox.relayed", "{path=after-commit}"));
        assertEquals(1, count("onceonly.outbox.relayed", "{path=sweep}"));
        assertEquals(2, count("onceonly.outbox.relay.duration", "{path=after-commit}"));
        assertEquals(1, count("onceonly.outbox.refused", "{parked=true}"));
        assertEquals(0, count("onceonly.outbox.refused", "{parked=false}"));
        assertEquals(7L, gauges.get("onceonly.outbox.pending").apply(gaugeOwner));
        assertEquals(1L, gauges.get("onceonly.outbox.parked").apply(gaugeOwner));
    }

    @Test
    void theConnectorsDeadLettersByChannelAndReason() {
        MpDeadLetterMetrics metrics = new MpDeadLetterMetrics(registry());
        metrics.deadLettered("orders", DeadLetterListener.Reason.MAX_ATTEMPTS);
        metrics.deadLettered("orders", DeadLetterListener.Reason.MAX_ATTEMPTS);
        metrics.deadLettered("orders", DeadLetterListener.Reason.UNSIGNED_COPY);
        metrics.deadLettered("payments", DeadLetterListener.Reason.CONFLICT);

        assertEquals(2, count("onceonly.dead.letters", "{channel=orders, reason=max-attempts}"));
        assertEquals(1, count("onceonly.dead.letters", "{channel=orders, reason=unsigned-copy}"));
        assertEquals(1, count("onceonly.dead.letters", "{channel=payments, reason=conflict}"));
        assertEquals(3, counts.size(), "only what happened is registered: " + counts.keySet());
    }
}
