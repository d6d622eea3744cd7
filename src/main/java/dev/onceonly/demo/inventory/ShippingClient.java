package dev.onceonly.demo.inventory;

import dev.onceonly.http.IdempotencyKeyHeader;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * Calls the shipping service over HTTP: a side effect outside the database, which a rollback cannot
 * undo. A handler that dies after this call and before its commit runs again and calls again, so
 * the request carries a key ({@code Idempotency-Key}, the same for every delivery of the order, on
 * every instance), and the service answers a key it has served without shipping again.
 */
@ApplicationScoped
public class ShippingClient {

    // HTTP/1.1, not the client's default HTTP/2: Liberty upgrades plain-HTTP requests to HTTP/2, and
    // with several consumer channels calling at once its HTTP/2 write queue stalled every call for
    // 1.5-2.7 s at a time (threads parked in H2WriteQEntry; seen with bench/run-load.sh).
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @Inject
    @ConfigProperty(name = "demo.shipping.url", defaultValue = "http://localhost:9080/api/shipping")
    String url;

    /**
     * Asks shipping to send the order's parcel.
     *
     * @param orderId the order
     * @param idempotencyKey puts the {@code Idempotency-Key} on the request: {@link IdempotencyKeyHeader#apply}
     *                       inside a single-message guarded handler (the guard's key and fence); a batch, which
     *                       has no guard key per message, sets a key of its own per order
     */
    public void ship(String orderId, UnaryOperator<HttpRequest.Builder> idempotencyKey) {
        HttpRequest request = idempotencyKey.apply(
                        HttpRequest.newBuilder(URI.create(url + "/" + URLEncoder.encode(orderId, StandardCharsets.UTF_8))))
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.noBody()).build();
        try {
            HttpResponse<Void> response = http.send(request, HttpResponse.BodyHandlers.discarding());
            if (response.statusCode() / 100 != 2) {
                throw new IllegalStateException("shipping answered HTTP " + response.statusCode());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("shipping unreachable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while calling shipping", e);
        }
    }
}
