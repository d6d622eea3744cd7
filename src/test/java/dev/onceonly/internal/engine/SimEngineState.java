package dev.onceonly.internal.engine;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a {@link GuardEngine} still holds, for {@code dev.onceonly.simulation}'s check that an
 * instance at rest holds nothing: only package-private reads cross the package line here.
 */
public final class SimEngineState {

    private SimEngineState() {
    }

    /** {@return each structure's count, by name: every one of them 0 once the world is at rest} */
    public static Map<String, Integer> held(GuardEngine engine) {
        Map<String, Integer> held = new LinkedHashMap<>();
        held.put("guarded calls in flight", engine.inFlight());
        held.put("leases renewed by the sweep", engine.leases.held());
        held.put("completions retried", engine.finaliser.completionsRetried());
        return held;
    }
}
