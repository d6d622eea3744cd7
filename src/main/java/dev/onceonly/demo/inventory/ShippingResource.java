package dev.onceonly.demo.inventory;

import dev.onceonly.api.IdempotencyContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.json.JsonObject;
import jakarta.ws.rs.BadRequestException;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * A stand-in shipping service that honours {@code Idempotency-Key}: the first request with a key
 * ships, a repeated key is answered with the first answer and ships nothing. It counts calls and
 * effective shipments per order: more than one effective shipment of an order is the bug OnceOnly
 * and the key prevent.
 *
 * <p>The keys it has served live in this server's memory only, without a bound: a restart forgets
 * them (a repeated call after a restart would ship again), and two servers do not share them. A
 * real service keeps them in its own database, with a retention at least as long as a message can
 * come back. A request without a key ships every time.
 */
@Path("/shipping")
@ApplicationScoped
@Produces(MediaType.APPLICATION_JSON)
public class ShippingResource {

    private static final int MAX_KEY = 255;

    /** Per order: calls received and effective shipments. */
    private final Map<String, Counts> orders = new ConcurrentHashMap<>();
    /** Idempotency key -> the order it shipped. */
    private final Map<String, String> served = new ConcurrentHashMap<>();

    private static final class Counts {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger shipments = new AtomicInteger();
    }

    @POST
    @Path("/{orderId}")
    public JsonObject ship(@PathParam("orderId") String orderId, @HeaderParam(IdempotencyContext.HEADER) String key) {
        if (key != null && (key.isBlank() || key.length() > MAX_KEY)) {
            throw new BadRequestException(IdempotencyContext.HEADER + " must be 1.." + MAX_KEY + " characters");
        }
        Counts counts = orders.computeIfAbsent(orderId, id -> new Counts());
        counts.calls.incrementAndGet();
        boolean ship = key == null || served.putIfAbsent(key, orderId) == null;
        if (ship) {
            counts.shipments.incrementAndGet();
        }
        return JSON.createObjectBuilder().add("orderId", orderId).add("shipped", ship)
                .add("shipments", counts.shipments.get()).build();
    }

    /**
     * Calls, effective shipments, orders shipped and the most effective shipments and calls one
     * order got; {@code prefix} narrows to orders whose id starts with it.
     */
    @GET
    public JsonObject summary(@QueryParam("prefix") String prefix) {
        String p = prefix == null ? "" : prefix;
        int calls = 0;
        int shipments = 0;
        int shipped = 0;
        int max = 0;
        int maxCalls = 0;
        for (Map.Entry<String, Counts> e : orders.entrySet()) {
            if (e.getKey().startsWith(p)) {
                int c = e.getValue().calls.get();
                int s = e.getValue().shipments.get();
                calls += c;
                shipments += s;
                shipped += s > 0 ? 1 : 0;
                max = Math.max(max, s);
                maxCalls = Math.max(maxCalls, c);
            }
        }
        return JSON.createObjectBuilder().add("calls", calls).add("shipments", shipments).add("orders", shipped)
                .add("maxPerOrder", max).add("maxCallsPerOrder", maxCalls).build();
    }

    int totalCalls() {
        return orders.values().stream().mapToInt(c -> c.calls.get()).sum();
    }

    int totalShipments() {
        return orders.values().stream().mapToInt(c -> c.shipments.get()).sum();
    }
}
