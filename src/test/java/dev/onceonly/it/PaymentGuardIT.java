package dev.onceonly.it;

import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guard inside a real Open Liberty server, configured by MicroProfile Config (server.env points
 * it at the real Redis), reached through the demo's REST resource.
 */
class PaymentGuardIT {

    static final String BASE = "http://localhost:" + System.getProperty("http.port", "9080") + "/api";
    final HttpClient http = HttpClient.newHttpClient();

    /**
     * A retried POST gets the first one's answer again, status and body (the receipt the guard kept
     * in the ledger row with the charge, its charge id included), marked as a replay; nothing is
     * charged twice.
     */
    @Test
    void secondDeliveryOfTheSamePaymentIsNotChargedAndGetsTheFirstAnswer() throws Exception {
        LedgerContract.Payment p = LedgerContract.Payment.of(10);
        HttpResponse<String> first = post(p.body());
        assertEquals(200, first.statusCode(), first.body());
        assertTrue(first.body().contains("PROCESSED") && first.body().contains("\"chargeId\":"), first.body());
        assertTrue(first.headers().firstValue("Idempotent-Replayed").isEmpty(), "the first answer is no replay");
        p.awaitDoneInRedis();

        HttpResponse<String> second = post(p.body());
        LedgerContract.assertReplayOf(first, second);
        assertEquals(1, charges(p.id()));

        // The claim lives in the real Redis, under the configured prefix and consumer, as DONE.
        assertTrue(p.key().storeKey().startsWith("oo:payments:"), p.key().storeKey());
        try (RedisClient redis = TestRedis.client()) {
            assertTrue(redis.get(p.key().storeKey()).startsWith("D"), "a DONE claim in Redis");
        }
    }

    @Test
    void failedChargeReleasesTheClaimSoTheRetryCharges() throws Exception {
        String id = "p-" + UUID.randomUUID();
        HttpResponse<String> failed = post("{\"paymentId\":\"" + id + "\",\"amount\":10,\"fail\":true}");
        assertEquals(503, failed.statusCode(), failed.body());
        assertEquals(0, charges(id));

        // Same key, different body: the failed attempt left nothing behind, so this one runs.
        HttpResponse<String> retry = post("{\"paymentId\":\"" + id + "\",\"amount\":10}");
        assertEquals(200, retry.statusCode(), retry.body());
        assertTrue(retry.body().contains("PROCESSED"), retry.body());
        assertEquals(1, charges(id));
    }

    @Test
    void sameKeyWithADifferentBodyIsAConflict() throws Exception {
        LedgerContract.Payment p = LedgerContract.Payment.of(10);
        assertEquals(200, post(p.body()).statusCode());
        p.awaitDoneInRedis();
        HttpResponse<String> other = post(p.withAmount(99));
        assertEquals(422, other.statusCode(), other.body());
        assertTrue(other.body().contains("CONFLICT") && !other.body().contains("chargeId"), other.body());
        assertTrue(other.headers().firstValue("Idempotent-Replayed").isEmpty(), "a conflict is no replay");
        assertEquals(1, charges(p.id()));
    }

    @Test
    void bodyWithoutTheKeyIsRejected() throws Exception {
        HttpResponse<String> r = post("{\"amount\":10}");
        assertEquals(422, r.statusCode(), r.body());
        assertTrue(r.body().contains("REJECTED") && r.body().contains("/paymentId"), r.body());
    }

    private HttpResponse<String> post(String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(BASE + "/payments"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private int charges(String id) throws Exception {
        String json = http.send(HttpRequest.newBuilder(URI.create(BASE + "/payments/" + id)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return Integer.parseInt(json.replaceAll(".*\"charges\":(\\d+).*", "$1"));
    }
}
