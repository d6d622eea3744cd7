package dev.onceonly.internal.outbox;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What an {@link OutboxRelay} still holds, for {@code dev.onceonly.simulation}'s check that an
 * instance at rest holds nothing: only package-private reads cross the package line here.
 */
public final class SimRelayState {

    private SimRelayState() {
    }

    /** {@return each structure's count, by name: every one of them 0 once the world is at rest} */
    public static Map<String, Integer> held(OutboxRelay relay) {
        Map<String, Integer> held = new LinkedHashMap<>();
        held.put("fast path's queued rows", relay.fastPathQueued());
        held.put("rows handed to the fast path, not relayed", relay.committedNotRelayed());
        return held;
    }
}
