package dev.onceonly.demo.inventory;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Outbox;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.http.IdempotencyKeyHeader;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.net.http.HttpRequest;
import java.util.function.UnaryOperator;

/**
 * The guarded consumer: checks the order, takes the ordered units from stock (in the same
 * transaction as the guard's ledger row) and asks shipping to send the parcel: an HTTP call nothing
 * can roll back, so it carries the guard's key as {@code Idempotency-Key} and shipping answers a
 * repeated key without shipping again.
 *
 * <p>An invalid order ({@link Order#parse}) fails before anything is touched and is never acted on.
 * It would fail the same way on every delivery, so {@link InvalidOrderException} is declared not worth
 * retrying ({@code noRetryFor}): the connector dead-letters it after one attempt, with the
 * exception's class and message as the reason. Other failures (shipping unreachable, the database
 * gone) are retried up to {@code max-attempts}.
 *
 * <p>Once the stock is taken, it announces {@code order.reserved} through the {@link Outbox}: the
 * event is written in the same transaction as the stock and the ledger row, and published after the
 * commit, so it goes out exactly when the reservation is real, and with the same message id
 * ({@code <guard key>/1}) however often the handler ran; {@link ReservedEvents} deduplicates on it.
 *
 * <p>The order id is the key: a redelivered or re-published order is a duplicate, and an order id
 * reused for a different order is a CONFLICT that ends in the dead-letter queue.
 */
@ApplicationScoped
public class InventoryConsumer {

    /** The consumer name the guard reports this consumer's events under. */
    static final String CONSUMER = "inventory";

    /**
     * {@return whether the guard's events of {@code consumer} count as the inventory's in the stats:
     * this consumer's and those of {@link InventoryBatchConsumer}, which does the same work per order}
     */
    static boolean countsAsInventory(String consumer) {
        return consumer.equals(CONSUMER) || consumer.equals(InventoryBatchConsumer.CONSUMER);
    }

    @PersistenceContext(unitName = "demo")
    EntityManager em;

    @Inject
    ShippingClient shipping;

    @Inject
    FaultInjector faults;

    @Inject
    Outbox outbox;

    @Inject
    @ConfigProperty(name = "demo.exchange", defaultValue = "orders")
    String exchange;

    @Inject
    @ConfigProperty(name = "demo.reserved-routing-key", defaultValue = "order.reserved")
    String reservedRoutingKey;

    /** {@code DEMO_RESERVED_EVENTS=false} leaves the events out (the load benchmark compares both). */
    @Inject
    @ConfigProperty(name = "demo.reserved-events", defaultValue = "true")
    boolean reservedEvents;

    @Inject
    @ConfigProperty(name = "demo.initial-stock", defaultValue = "1000")
    long initialStock;

    @Incoming("orders")
    @Measured
    @TracksAttempt
    @IdempotentMessage(consumer = CONSUMER, keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/orderId",
            noRetryFor = InvalidOrderException.class)
    @Transactional
    public void onOrder(String json, IncomingRabbitMetadata delivery) {
        // The delivery's metadata is there for @TracksAttempt (the page shows each decision's attempt).
        Order order = Order.parse(json); // throws InvalidOrderException before any effect
        reserve(order, IdempotencyKeyHeader::apply); // the guard's key for this message
        announce(order, null); // its message id derived from the guard's key: <key>/1
    }

    /**
     * One order's work, in the caller's transaction: takes its units from stock and asks shipping to
     * send it. {@link InventoryBatchConsumer} does the same work per order.
     *
     * @param order the order, checked
     * @param idempotencyKey puts the shipping call's {@code Idempotency-Key} on its request
     */
    public void reserve(Order order, UnaryOperator<HttpRequest.Builder> idempotencyKey) {
        // Locked: several channels may take from the same SKU at once.
        Stock stock = em.find(Stock.class, order.sku(), LockModeType.PESSIMISTIC_WRITE);
        if (stock == null) {
            stock = new Stock(order.sku(), initialStock);
            em.persist(stock);
        }
        stock.take(order.quantity());
        em.flush();
        faults.maybeFailFirstAttempt(order.orderId());
        faults.maybeSlowDown(order.orderId());
        shipping.ship(order.orderId(), idempotencyKey);
    }

    /**
     * Sends the order's {@code order.reserved} event through the outbox, in the caller's transaction
     * (unless the demo runs without events, {@code DEMO_RESERVED_EVENTS=false}).
     *
     * @param order     the order, reserved
     * @param messageId the event's message id, the same on every delivery of the order; {@code null}
     *                  inside a single-message guarded handler, which derives it from the guard's key
     */
    public void announce(Order order, String messageId) {
        if (reservedEvents) {
            OutboxMessage event = OutboxMessage.text(exchange, reservedRoutingKey, order.toJson()).withContentType("application/json");
            outbox.send(messageId == null ? event : event.withMessageId(messageId));
        }
    }
}
