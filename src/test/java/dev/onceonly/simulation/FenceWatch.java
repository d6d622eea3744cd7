package dev.onceonly.simulation;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.testing.ForwardingClaimStore;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The fencing invariant, checked as the run goes: every claim the shared store grants carries a
 * fence, greater than the fence of every earlier claim of the same key (the {@code ClaimStore}
 * contract), through releases, expired leases and done marks, and the Redis-like store's fail-overs
 * and restarts. Wraps the shared store under every instance's {@link SimStore}, so it sees the
 * claims in the order the store decided them, the lost answers' too; single-threaded, like the loop.
 */
final class FenceWatch extends ForwardingClaimStore {

    private final Trace trace;
    /** Per key, the fence of its last claim. */
    private final Map<String, Long> last = new HashMap<>();

    FenceWatch(ClaimStore store, Trace trace) {
        super(store);
        this.trace = trace;
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        ClaimResult r = store.claim(key, token, fingerprint, lease);
        if (r.state() == ClaimState.ACQUIRED) {
            Long before = last.put(key, r.fence());
            if (r.fence() <= 0) {
                trace.violation("a claim of " + store.name() + " carries no fence (key digest " + Integer.toHexString(key.hashCode()) + ")");
            } else if (before != null && r.fence() <= before) {
                trace.violation("fence " + r.fence() + " after " + before + ": not above the key's earlier claim (key digest "
                        + Integer.toHexString(key.hashCode()) + ")");
            }
        }
        return r;
    }
}
