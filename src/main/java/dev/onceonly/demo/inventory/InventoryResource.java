package dev.onceonly.demo.inventory;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.BadRequestException;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The demo's REST API: publish orders (with deliberate copies, to show duplicates), read stock,
 * and read what the guard decided.
 */
@Path("/")
@ApplicationScoped
@Produces(MediaType.APPLICATION_JSON)
public class InventoryResource {

    @Inject
    @Channel("orders-out")
    @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = SEND_CHUNK)
    Emitter<String> orders;

    /** Orders sent before waiting for their confirms: keeps the emitter's buffer from overflowing. */
    private static final int SEND_CHUNK = 512;

    @Inject
    DemoStats stats;

    @Inject
    ConsumerTimings timings;

    @Inject
    ShippingResource shipping;

    @PersistenceContext(unitName = "demo")
    EntityManager em;

    /**
     * Publishes one order {@code copies} times (publisher confirms awaited), as a broker redelivering
     * or a publisher retrying would. {@code orderId} is generated when absent.
     */
    @POST
    @Path("/orders")
    @Consumes(MediaType.APPLICATION_JSON)
    public JsonObject publish(JsonObject body, @QueryParam("copies") @DefaultValue("1") int copies) throws Exception {
        if (copies < 1 || copies > 100) {
            throw new BadRequestException("copies must be between 1 and 100");
        }
        Order order;
        try {
            order = new Order(body.getString("orderId", UUID.randomUUID().toString()),
                    body.getString("sku", "widget"), body.getInt("quantity", 1));
        } catch (InvalidOrderException | ClassCastException e) {
            throw new BadRequestException(e.getMessage());
        }
        send(List.of(order), copies);
        return Json.createObjectBuilder().add("orderId", order.orderId()).add("published", copies).build();
    }

    /** Publishes {@code count} distinct orders of one unit each, every one {@code copies} times: a load for demos and tests. */
    @POST
    @Path("/orders/bulk")
    public JsonObject bulk(@QueryParam("count") @DefaultValue("100") int count, @QueryParam("copies") @DefaultValue("3") int copies,
                           @QueryParam("sku") @DefaultValue("widget") String sku, @QueryParam("prefix") String prefix) throws Exception {
        if (count < 1 || count > 100_000 || copies < 1 || copies > 100) {
            throw new BadRequestException("count must be 1..100000 and copies 1..100");
        }
        String p = prefix == null ? UUID.randomUUID() + "-" : prefix;
        List<Order> batch = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                batch.add(new Order(p + i, sku, 1));
            }
        } catch (InvalidOrderException e) {
            throw new BadRequestException(e.getMessage());
        }
        send(batch, copies);
        return Json.createObjectBuilder().add("prefix", p).add("published", count * copies).build();
    }

    private void send(List<Order> batch, int copies) throws Exception {
        List<CompletableFuture<Void>> confirms = new ArrayList<>();
        // Copies interleaved with other orders, as redeliveries arrive in real life.
        for (int c = 0; c < copies; c++) {
            for (Order o : batch) {
                confirms.add(orders.send(o.toJson()).toCompletableFuture());
                if (confirms.size() == SEND_CHUNK) {
                    awaitConfirms(confirms);
                }
            }
        }
        awaitConfirms(confirms);
    }

    private static void awaitConfirms(List<CompletableFuture<Void>> confirms) throws Exception {
        CompletableFuture.allOf(confirms.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
        confirms.clear();
    }

    @GET
    @Path("/stock/{sku}")
    public JsonObject stock(@PathParam("sku") String sku) {
        Stock s = em.find(Stock.class, sku);
        return Json.createObjectBuilder().add("sku", sku).add("quantity", s == null ? 0 : s.quantity()).add("known", s != null).build();
    }

    @PUT
    @Path("/stock/{sku}")
    @Transactional
    public JsonObject setStock(@PathParam("sku") String sku, @QueryParam("quantity") long quantity) {
        Stock s = em.find(Stock.class, sku);
        if (s == null) {
            em.persist(new Stock(sku, quantity));
        } else {
            s.set(quantity);
        }
        return stock(sku);
    }

    @GET
    @Path("/stats")
    public JsonObject stats() {
        return Json.createObjectBuilder(stats.toJson(shipping.totalCalls(), shipping.totalShipments())).add("timing", timings.toJson()).build();
    }

    /** Starts a new latency window (the counters above stay cumulative). */
    @DELETE
    @Path("/stats/timing")
    public JsonObject resetTiming() {
        timings.reset();
        return timings.toJson();
    }
}
