package dev.onceonly.spi;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a connector hands a delivery to the guard. Before it passes a payload to the application,
 * the connector {@linkplain #post posts} the delivery's {@link Dispatch} under that payload
 * <em>object</em>; the guard {@linkplain #take takes} it when the method it intercepts received
 * that very object (identity, not equality) as its payload. So the delivery applies to exactly one
 * invocation: the one made for it. Any other guarded call — a bean the consumer calls, a call on
 * another thread, a second call with the same argument — finds nothing and keys on its own
 * arguments.
 *
 * <p>The connector {@linkplain #withdraw withdraws} the entry when it settles the delivery, so the
 * board never holds more than the deliveries in flight. One per application.
 */
@ApplicationScoped
public class Handover {

    private final ConcurrentHashMap<Identity, Dispatch> posted = new ConcurrentHashMap<>();
    private volatile AheadClaims aheadClaims = AheadClaims.NONE;

    /**
     * Takes claims ahead for the deliveries of a channel. Implemented by the guard; a connector
     * calls it through {@link #claimAhead}.
     */
    @FunctionalInterface
    public interface AheadClaims {
        /** Takes none. */
        AheadClaims NONE = (channel, dispatches) -> { };

        /**
         * Claims, in one round trip where the store can, the keys of those {@code dispatches} that
         * hold no claim yet, and gives each claim to its dispatch ({@link Dispatch#holdAheadClaim}).
         * Deliveries of channels without a guarded consumer, keys that cannot be derived, and a store
         * that fails are skipped: each such message is claimed in its own turn as usual.
         *
         * @param channel    the Reactive Messaging channel the deliveries are for
         * @param dispatches deliveries buffered for that channel, in the order they will be handed over
         */
        void claim(String channel, List<? extends Dispatch> dispatches);
    }

    /**
     * Sets who takes claims ahead (the guard, at startup).
     *
     * @param claims the guard's implementation; {@link AheadClaims#NONE} to stop
     */
    public void claimAheadWith(AheadClaims claims) {
        aheadClaims = claims;
    }

    /**
     * Asks the guard to claim the keys of deliveries a connector has buffered, before it hands them
     * over one by one: the claims of many messages then cost one round trip instead of one each. A
     * connector that asks must keep each claim ({@link Dispatch#holdAheadClaim}) and abandon it when
     * it settles the delivery. Never throws for the store's sake.
     *
     * @param channel    the channel the deliveries are for
     * @param dispatches the deliveries, in the order they will be handed over
     */
    public void claimAhead(String channel, List<? extends Dispatch> dispatches) {
        aheadClaims.claim(channel, dispatches);
    }

    /**
     * Posts {@code dispatch} for the invocation that will receive {@code payload}.
     *
     * @param payload the very object the connector passes to the application
     * @param dispatch the delivery's dispatch
     */
    public void post(Object payload, Dispatch dispatch) {
        posted.put(new Identity(payload), dispatch);
    }

    /**
     * Takes the dispatch posted under this very object, once.
     *
     * @param payload the payload argument the intercepted method received
     * @return the dispatch posted under it; {@code null} when there is none
     */
    public Dispatch take(Object payload) {
        return payload == null || posted.isEmpty() ? null : posted.remove(new Identity(payload));
    }

    /**
     * Removes what is still posted under {@code payload} (the delivery was settled).
     *
     * @param payload the object the dispatch was posted under
     */
    public void withdraw(Object payload) {
        posted.remove(new Identity(payload));
    }

    /** {@return the number of deliveries posted and neither taken nor withdrawn} */
    public int pending() {
        return posted.size();
    }

    /** A map key comparing by identity: two equal strings of two deliveries are two entries. */
    private record Identity(Object value) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Identity other && other.value == value;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(value);
        }
    }
}
