package dev.onceonly.spi;

import jakarta.enterprise.context.ApplicationScoped;

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
        // No isEmpty() shortcut: the map's count lags its entries while others post and withdraw,
        // so it can read 0 with this payload's delivery posted, and the delivery would be missed.
        return payload == null ? null : posted.remove(new Identity(payload));
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
