package dev.onceonly.chaos;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shipping service the demo instances call during a chaos run (JDK HttpServer in the driver's
 * JVM, so it outlives every instance it counts): {@code POST /ship/<instance>/<orderId>} with the
 * guard's {@code Idempotency-Key}. Like the demo's own shipping service it ships on the first call
 * with a key and answers a repeated key without shipping; it records every call (when, from which
 * instance, with which key), so that calls and effective shipments can be told apart per order.
 */
public final class ShippingCounter implements AutoCloseable {

    public record Call(long nanos, String instance, String key) {
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(8);
    private final Map<String, List<Call>> calls = new ConcurrentHashMap<>();
    private final Map<String, String> orderByKey = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> shipments = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();
    private final AtomicInteger withoutKey = new AtomicInteger();
    private final AtomicLong lastCallNanos = new AtomicLong(System.nanoTime());

    public ShippingCounter() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext("/ship/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    /** The {@code demo.shipping.url} of one instance. */
    public String url(String instance) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/ship/" + instance;
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String[] parts = exchange.getRequestURI().getRawPath().split("/", 4); // "", ship, instance, orderId
            if (!exchange.getRequestMethod().equals("POST") || parts.length != 4) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            String orderId = URLDecoder.decode(parts[3], StandardCharsets.UTF_8);
            String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
            long now = System.nanoTime();
            calls.computeIfAbsent(orderId, id -> java.util.Collections.synchronizedList(new ArrayList<>()))
                    .add(new Call(now, parts[2], key));
            total.incrementAndGet();
            lastCallNanos.set(now);
            boolean ship;
            if (key == null) {
                withoutKey.incrementAndGet();
                ship = true;
            } else {
                ship = orderByKey.putIfAbsent(key, orderId) == null;
            }
            if (ship) {
                shipments.computeIfAbsent(orderId, id -> new AtomicInteger()).incrementAndGet();
            }
            byte[] body = ("{\"orderId\":\"" + orderId.replace("\"", "") + "\",\"shipped\":" + ship + "}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
        }
    }

    public int totalCalls() {
        return total.get();
    }

    public int callsWithoutKey() {
        return withoutKey.get();
    }

    public long lastCallNanos() {
        return lastCallNanos.get();
    }

    public List<Call> calls(String orderId) {
        List<Call> c = calls.get(orderId);
        if (c == null) {
            return List.of();
        }
        synchronized (c) {
            return List.copyOf(c);
        }
    }

    public int shipments(String orderId) {
        AtomicInteger n = shipments.get(orderId);
        return n == null ? 0 : n.get();
    }

    /** Keys that shipped, with the order each shipped. */
    public Map<String, String> keys() {
        return Map.copyOf(orderByKey);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
