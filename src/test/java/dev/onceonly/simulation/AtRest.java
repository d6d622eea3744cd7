package dev.onceonly.simulation;

import dev.onceonly.internal.engine.SimEngineState;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * At rest, nothing is held: once the world has settled, every live instance's channel has no
 * unsettled delivery and an empty claim-ahead line (or its listener no delivery in progress), its
 * hand-over nothing posted, its engine no call in flight, no lease renewed and no completion
 * retried, and its outbox relay nothing waiting in the fast path. A structure that only grows (a
 * delivery never forgotten, a lease never dropped) keeps the world from settling and fails the run.
 */
final class AtRest {

    private AtRest() {
    }

    /** {@return what {@code in} still holds, by name} */
    static Map<String, Integer> held(SimInstance in) {
        Map<String, Integer> held = new LinkedHashMap<>();
        if (in.jmsListener() != null) {
            held.put("listener deliveries in progress", in.jmsListener().inProgress());
        } else {
            held.putAll(in.connector().held());
        }
        held.put("deliveries posted on the hand-over", in.handover().pending());
        held.putAll(SimEngineState.held(in.engine()));
        if (in.outbox() != null) {
            held.putAll(in.outbox().held());
        }
        return held;
    }

    /** {@return whether {@code in} holds nothing} */
    static boolean holdsNothing(SimInstance in) {
        return held(in).values().stream().allMatch(n -> n == 0);
    }

    /** Fails the run for each thing a live instance of {@code w} still holds. */
    static void check(World w) {
        for (SimInstance in : w.live()) {
            held(in).forEach((what, n) -> {
                if (n != 0) {
                    w.loop.trace.violation(in.name + " at rest still holds " + n + " " + what);
                }
            });
        }
    }
}
