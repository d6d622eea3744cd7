package dev.onceonly.demo.inventory;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A stand-in shipping service that counts how often each order was shipped: more than once is the bug OnceOnly prevents. */
@Path("/shipping")
@ApplicationScoped
@Produces(MediaType.APPLICATION_JSON)
public class ShippingResource {

    private final Map<String, AtomicInteger> shipments = new ConcurrentHashMap<>();

    @POST
    @Path("/{orderId}")
    public JsonObject ship(@PathParam("orderId") String orderId) {
        int n = shipments.computeIfAbsent(orderId, id -> new AtomicInteger()).incrementAndGet();
        return Json.createObjectBuilder().add("orderId", orderId).add("shipments", n).build();
    }

    /** Calls, orders and the most calls one order got; {@code prefix} narrows to orders whose id starts with it. */
    @GET
    public JsonObject summary(@QueryParam("prefix") String prefix) {
        String p = prefix == null ? "" : prefix;
        int calls = 0;
        int orders = 0;
        int max = 0;
        for (Map.Entry<String, AtomicInteger> e : shipments.entrySet()) {
            if (e.getKey().startsWith(p)) {
                int n = e.getValue().get();
                calls += n;
                orders++;
                max = Math.max(max, n);
            }
        }
        return Json.createObjectBuilder().add("calls", calls).add("orders", orders).add("maxPerOrder", max).build();
    }

    int totalCalls() {
        return shipments.values().stream().mapToInt(AtomicInteger::get).sum();
    }
}
