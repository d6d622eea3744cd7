package dev.onceonly.demo.inventory;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * The demo's REST API: publish orders (with deliberate copies, to show duplicates, or invalid ones,
 * to fill the dead-letter queue, which {@link DeadLetterList} shows), read stock, and read what the
 * guard decided.
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
    ReservedEvents reserved;

    @Inject
    ConsumerTimings timings;

    @Inject
    ShippingResource shipping;

    @Inject
    DeadLetterList deadLetters;

    @Inject
    ClaimStoreOutage outage;

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
        return JSON.createObjectBuilder().add("orderId", order.orderId()).add("published", copies).build();
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
        return JSON.createObjectBuilder().add("prefix", p).add("published", count * copies).build();
    }

    /**
     * Publishes one order the consumer must refuse, to watch it end in the dead-letter queue:
     * {@code kind=invalid} (quantity -3) fails on every attempt and is dead-lettered after
     * {@code max-attempts}; {@code kind=keyless} (no orderId) is REJECTED by the guard at once.
     * Answers with the body's SHA-256, by which the page's dead-letter list shows it.
     */
    @POST
    @Path("/orders/invalid")
    public JsonObject publishInvalid(@QueryParam("kind") @DefaultValue("invalid") String kind) throws Exception {
        JsonObjectBuilder order = JSON.createObjectBuilder();
        switch (kind) {
            case "invalid" -> order.add("orderId", UUID.randomUUID().toString()).add("sku", "widget").add("quantity", -3);
            // A keyless body must still differ from the last one, or the dead-letter list could not tell them apart.
            case "keyless" -> order.add("sku", "widget-" + UUID.randomUUID().toString().substring(0, 8)).add("quantity", 1);
            default -> throw new BadRequestException("kind must be invalid or keyless");
        }
        String body = order.build().toString();
        orders.send(body).toCompletableFuture().get(1, TimeUnit.MINUTES);
        return JSON.createObjectBuilder().add("kind", kind).add("published", 1)
                .add("bodySha256", DeadLetterList.sha256(body.getBytes(StandardCharsets.UTF_8))).build();
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
        return JSON.createObjectBuilder().add("sku", sku).add("quantity", s == null ? 0 : s.quantity()).add("known", s != null).build();
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
        return JSON.createObjectBuilder(stats.toJson(deadLetters.count(), shipping.totalCalls(), shipping.totalShipments()))
                .add("reservedEvents", reserved.applied()).add("reservedDuplicates", reserved.duplicates())
                .add("claimStoreOutageSeconds", outage.secondsLeft())
                .add("timing", timings.toJson()).build();
    }

    /**
     * Rehearses a claim-store (Redis) outage: the store is suspended for {@code seconds} (1 to 300)
     * and new orders are guarded by the ledger alone meanwhile (the consumer's store-failure policy).
     */
    @POST
    @Path("/claim-store/outage")
    public JsonObject claimStoreOutage(@QueryParam("seconds") @DefaultValue("15") int seconds) {
        if (seconds < 1 || seconds > ClaimStoreOutage.MAX.toSeconds()) {
            throw new BadRequestException("seconds: from 1 to " + ClaimStoreOutage.MAX.toSeconds());
        }
        outage.start(Duration.ofSeconds(seconds));
        return JSON.createObjectBuilder().add("claimStoreOutageSeconds", outage.secondsLeft()).build();
    }

    /** Starts a new latency window (the counters above stay cumulative). */
    @DELETE
    @Path("/stats/timing")
    public JsonObject resetTiming() {
        timings.reset();
        return timings.toJson();
    }
}
