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
    private final ConcurrentHashMap<Identity, List<? extends Dispatch>> batches = new ConcurrentHashMap<>();

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
     * Posts the deliveries of a batch for the invocation that will receive {@code payloads}, the
     * very list object the connector passes to the application: element {@code i} of
     * {@code dispatches} is the delivery of element {@code i} of {@code payloads}.
     *
     * @param payloads   the list object passed to the application
     * @param dispatches the deliveries' dispatches, in the order of {@code payloads}
     */
    public void postBatch(List<?> payloads, List<? extends Dispatch> dispatches) {
        if (payloads.size() != dispatches.size()) {
            throw new IllegalArgumentException("one dispatch per payload: " + payloads.size() + " payloads, " + dispatches.size() + " dispatches");
        }
        batches.put(new Identity(payloads), List.copyOf(dispatches));
    }

    /**
     * Takes the dispatches posted under this very list object, once.
     *
     * @param payloads the list argument the intercepted method received
     * @return the dispatches posted under it, in the order of its elements; {@code null} when there are none
     */
    public List<? extends Dispatch> takeBatch(Object payloads) {
        return payloads == null ? null : batches.remove(new Identity(payloads));
    }

    /**
     * Removes what is still posted under {@code payload}, a delivery's or a batch's (it was settled).
     *
     * @param payload the object the dispatch or the batch was posted under
     */
    public void withdraw(Object payload) {
        Identity key = new Identity(payload);
        posted.remove(key);
        batches.remove(key);
    }

    /** {@return the number of deliveries and batches posted and neither taken nor withdrawn} */
    public int pending() {
        return posted.size() + batches.size();
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
