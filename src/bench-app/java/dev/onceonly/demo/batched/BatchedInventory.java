package dev.onceonly.demo.batched;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.demo.inventory.InvalidOrderException;
import dev.onceonly.demo.inventory.InventoryConsumer;
import dev.onceonly.demo.inventory.Measured;
import dev.onceonly.demo.inventory.Order;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.util.List;

/**
 * The load benchmark's batch consumer (mode {@code batched} of {@code bench/run-load.sh}): the demo's
 * inventory work per order ({@link InventoryConsumer#reserve}), guarded, on batches of orders, with
 * one transaction per batch. Compiled into the benchmark's WAR only (profile {@code bench}).
 *
 * <p>Its channel {@code orders-batched} ({@code batch=true}, its own queue and routing key) and its
 * consumer's ledger are configured by the run's server configuration, not the demo's properties; in
 * the run's other modes it is wired and idle. A batch has no guard key per message, so each shipping
 * call carries one of its own, the same for every delivery of the order. It sends no
 * {@code order.reserved} event, as the modes it is compared with run with the events off.
 */
@ApplicationScoped
public class BatchedInventory {

    /** The guard's consumer name; the demo's stats count its events as the inventory's. */
    static final String CONSUMER = "inventory-batched";

    @Inject
    InventoryConsumer inventory;

    @Incoming("orders-batched")
    @Measured
    @IdempotentMessage(consumer = CONSUMER, keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/orderId",
            noRetryFor = InvalidOrderException.class)
    @Transactional
    public void onOrders(List<String> orders) {
        for (String json : orders) {
            Order order = Order.parse(json);
            String key = CONSUMER + ":" + order.orderId();
            inventory.reserve(order, request -> request.setHeader(IdempotencyContext.HEADER, key));
        }
    }
}
