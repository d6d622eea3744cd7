package dev.onceonly.demo.inventory;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.util.List;

/**
 * The inventory consumer written for batches: the same work per order as {@link InventoryConsumer}
 * ({@link InventoryConsumer#reserve}), on a list of orders, in one transaction per batch. Its
 * channel {@code orders-batch} has {@code batch=true} (batches of {@code demo.batch-size},
 * {@code DEMO_BATCH_SIZE}) and a queue of its own, bound to {@code order.placed.batch}: it idles until
 * orders are published with that key ({@code DEMO_ROUTING_KEY=order.placed.batch}).
 *
 * <p>The guard decides every order of a batch on its own: copies are settled as duplicates before
 * the method runs, and an invalid order fails the batch, which then runs again in halves until that
 * order is alone and dead-lettered, while the others commit once. A batch has no guard key per
 * message, so what leaves the transaction carries a key of its own per order, the same on every
 * delivery: the shipping call's {@code Idempotency-Key} and the {@code order.reserved} event's
 * message id.
 */
@ApplicationScoped
public class InventoryBatchConsumer {

    /** The consumer name the guard reports this consumer's events under. */
    static final String CONSUMER = "inventory-batch";

    @Inject
    InventoryConsumer inventory;

    @Incoming("orders-batch")
    @Measured
    @IdempotentMessage(consumer = CONSUMER, keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/orderId",
            noRetryFor = InvalidOrderException.class)
    @Transactional
    public void onOrders(List<String> orders) {
        for (String json : orders) {
            Order order = Order.parse(json); // throws InvalidOrderException: the batch splits down to this order
            String key = CONSUMER + ":" + order.orderId();
            inventory.reserve(order, request -> request.setHeader(IdempotencyContext.HEADER, key));
            inventory.announce(order, key + "/reserved");
        }
    }
}
