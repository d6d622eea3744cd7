package dev.onceonly.simulation;

import dev.onceonly.rabbitmq.RabbitHeaders;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What must hold after every run, in every mode, once the world has settled (docs/guarantees.md):
 * <ul>
 *   <li>each message's effect at most once — with the ledger always; without it, a second effect is
 *       allowed only where a window docs/guarantees.md names opened for that message (counted, not failed);</li>
 *   <li>nothing lost: each message's effect committed, or the message dead-lettered by the
 *       connector with its outcome and reason; the broker itself dropped nothing;</li>
 *   <li>poison messages and messages without a key dead-lettered, never applied (guarded); a valid
 *       message dead-lettered only after its attempts ran out (never refused as a forged copy,
 *       also while the signing key is rotated by rolling restarts);</li>
 *   <li>every queue drained, every delivery settled (a double settlement fails the run when it happens);</li>
 *   <li>no claim still held a lease after its delivery was settled;</li>
 *   <li>at rest, nothing is held: every live instance's unsettled deliveries, claim-ahead line,
 *       hand-over, guarded calls in flight, leases renewed, completions retried and outbox fast path
 *       are empty ({@link AtRest}), so a structure that only grows fails the run;</li>
 *   <li>every broker action the connector took was the one the rules give, and every dead letter
 *       of a valid message came after its attempts ran out (checked as it is taken, by {@link SettlementWatch});</li>
 *   <li>every claim the store granted carried a fence above that of the key's earlier claims, in
 *       every mode that claims (checked as the run goes, by {@link FenceWatch}).</li>
 * </ul>
 * Bounded internal queues and attempts that never go down are checked while the run goes on ({@link World});
 * the outbox's, in outbox modes, by {@link OutboxInvariants}.
 */
final class Invariants {

    private final World w;
    private final Trace trace;

    Invariants(World w) {
        this.w = w;
        this.trace = w.loop.trace;
    }

    void check() {
        w.storeFaulted.forEach((key, why) -> {
            String id = w.keyOf.get(key);
            if (id != null) {
                w.windows.putIfAbsent(id, why);
            }
        });
        Map<String, String> deadLettered = deadLetters();
        for (Map.Entry<String, String> m : w.published.entrySet()) {
            String id = m.getKey();
            String kind = m.getValue();
            int effects = w.db.effects.getOrDefault(id, 0);
            boolean dead = deadLettered.containsKey(id);
            if (effects > 1) {
                String window = w.windows.get(id);
                boolean retention = w.operators.retentionRanOut(id, storeKeyOf(id));
                if (!w.mode.ledger() && window != null || !w.mode.guarded() || retention) {
                    trace.event(id + " applied " + effects + " times, in a window docs/guarantees.md names: " + window);
                } else {
                    trace.violation(id + " applied " + effects + " times" + (window == null ? "" : " (window: " + window + ")")
                            + w.operators.about(id, storeKeyOf(id)));
                }
            }
            if (kind.equals("normal") && dead && !deadLettered.get(id).equals("FAILED")
                    && !deadLettered.get(id).startsWith(SimJms.EXCEPTION_DESTINATION)) {
                // Only its attempts running out may dead-letter a valid message: a copy refused as
                // forged after a signing key's rotation, say, would be REJECTED. (A JMS provider
                // counts every rollback, BUSY and RETRY included, against its redelivery limit.)
                trace.violation(id + " dead-lettered as " + deadLettered.get(id) + ", not after its attempts");
            }
            if (w.mode.guarded() && !kind.equals("normal") && effects > 0 && !w.hostile.mayApply(id, kind)) {
                trace.violation(id + " (" + kind + ") was applied");
            }
            if (effects == 0 && !dead) {
                trace.violation(id + " (" + kind + ") lost: never applied, not dead-lettered");
            }
        }
        for (SimBroker.Message m : w.broker.dropped) {
            trace.violation("the broker dropped " + id(m) + ": nothing may be lost");
        }
        for (SimBroker.Queue q : w.broker.queues.values()) {
            if (World.drains(q) && (!q.ready.isEmpty() || q.outstanding() > 0)) {
                trace.violation("queue " + q.name + " not drained: " + q.ready.size() + " ready, " + q.outstanding() + " unacked");
            }
        }
        if (w.jms != null) {
            Set<String> faulted = new HashSet<>();
            w.stores.forEach(store -> store.faultedKeys().forEach(key -> faulted.add(w.keyOf.get(key))));
            w.jms.check(trace, faulted);
        }
        for (String key : w.keysSeen) {
            ClaimResult r = w.store.claim(key, "invariant-probe", "", Mode.LEASE);
            if (r.state() == ClaimState.IN_PROGRESS) {
                trace.violation("a claim is still held after every delivery was settled (key digest "
                        + Integer.toHexString(key.hashCode()) + ")");
            } else if (r.state() == ClaimState.ACQUIRED) {
                w.store.release(key, "invariant-probe");
            }
        }
        if (w.outbox != null) {
            new OutboxInvariants(w).check();
        }
        w.operators.check();
        AtRest.check(w);
    }

    /** Messages in the dead-letter queue, by logical id; a dead letter without the connector's reason is a violation. */
    private Map<String, String> deadLetters() {
        Map<String, String> found = new HashMap<>();
        for (SimBroker.Queue q : w.broker.queues.values()) {
            if (!q.name.endsWith(".dlq")) {
                continue;
            }
            for (SimBroker.Message m : q.ready) {
                Object outcome = m.header(RabbitHeaders.OUTCOME);
                Object reason = m.header(RabbitHeaders.REASON);
                if (outcome == null || reason == null) {
                    trace.violation(id(m) + " dead-lettered without the connector's outcome and reason (by the broker?)");
                }
                found.put(id(m), String.valueOf(outcome));
            }
        }
        if (w.jms != null) {
            found.putAll(w.jms.takenAside(trace));
        }
        w.operators.discarded().forEach(found::putIfAbsent);
        return found;
    }

    private String storeKeyOf(String id) {
        return w.keyOf.entrySet().stream().filter(e -> e.getValue().equals(id)).map(Map.Entry::getKey)
                .findFirst().orElse(null);
    }

    private String id(SimBroker.Message m) {
        return w.logicalId(m.messageId(), new String(m.body, StandardCharsets.UTF_8));
    }
}
