package dev.onceonly.simulation;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What must hold of the outbox once the world settled (docs/outbox.md), beside
 * what is checked as it happens (ids unique per handler run, {@link SimOutboxSide}; each publish made
 * under its row's lock and in its source's order, {@link SimOutbox#checkPublish}):
 * <ul>
 *   <li>no row is pending;</li>
 *   <li>every committed row reached the outbox queue at least once, unless it was parked after
 *       {@code max-attempts} refusals (counted in the trace, with the broker's reason);</li>
 *   <li>every message in the outbox queue is a committed row's (id and body): nothing of a
 *       transaction that rolled back went out;</li>
 *   <li>a message's rows sent from the handler's own transaction all come from one transaction, the
 *       one that committed the handler's effect; and once the effect committed, every message the
 *       handler sends exists (those from its {@code REQUIRES_NEW} transaction too).</li>
 * </ul>
 */
final class OutboxInvariants {

    private final World w;
    private final SimOutbox outbox;
    private final Trace trace;

    OutboxInvariants(World w) {
        this.w = w;
        this.outbox = w.outbox;
        this.trace = w.loop.trace;
    }

    void check() {
        Set<String> published = new HashSet<>();
        for (SimBroker.Message m : w.broker.queues.get(World.OUTBOX_QUEUE).ready) {
            published.add(m.messageId());
            SimOutbox.Row row = outbox.byMessageId.get(m.messageId());
            if (row == null || !new String(row.written.message().body(), StandardCharsets.UTF_8)
                    .equals(new String(m.body, StandardCharsets.UTF_8))) {
                trace.violation("outbox message " + m.messageId() + " went out, but no committed transaction sent it");
            }
        }
        Map<String, Map<Integer, SimOutbox.Row>> bySource = new HashMap<>();
        for (SimOutbox.Row row : outbox.rows.values()) {
            String id = row.written.messageId();
            if (row.state == SimOutbox.PENDING) {
                trace.violation("outbox row " + id + " still pending after the world settled");
            } else if (row.state == SimOutbox.PARKED) {
                trace.event("outbox row " + id + " parked after " + row.attempts + " refusals: " + row.lastError);
            } else if (!published.contains(id)) {
                trace.violation("outbox row " + id + " marked sent, but it never reached the outbox queue");
            }
            bySource.computeIfAbsent(row.written.source(), s -> new HashMap<>())
                    .put(Integer.parseInt(id.substring(id.lastIndexOf('/') + 1)), row);
        }
        Map<String, String> sourceOf = new HashMap<>();
        w.keyOf.forEach((key, logical) -> sourceOf.put(logical, key));
        for (Map.Entry<String, SimOutbox.Plan> e : outbox.plans.entrySet()) {
            String id = e.getKey();
            SimOutbox.Plan plan = e.getValue();
            Map<Integer, SimOutbox.Row> rows = bySource.getOrDefault(sourceOf.get(id), Map.of());
            List<SimDatabase.Tx> own = rows.entrySet().stream().filter(r -> r.getKey() != plan.nested())
                    .map(r -> r.getValue().tx).distinct().toList();
            if (own.size() > 1 || own.size() == 1 && !own.get(0).effects.contains(id)) {
                trace.violation(id + ": its handler's messages come from " + own.size()
                        + " transactions, not from the one that committed its effect");
            }
            if (w.db.effects.getOrDefault(id, 0) > 0 && rows.size() != plan.sends()) {
                trace.violation(id + ": its effect committed, but " + rows.size() + " of its " + plan.sends()
                        + " outbox messages exist");
            }
        }
    }
}
