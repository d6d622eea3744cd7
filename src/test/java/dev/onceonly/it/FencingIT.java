package dev.onceonly.it;

import dev.onceonly.testing.ItServer;
import dev.onceonly.testing.TestRedis;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The late holder on Open Liberty, with the ledger off, through the public API only (the test
 * application's {@code FencedTransfers}, {@code FenceCheckingService}, {@code FencingResource}):
 * holder A claims a transfer (fence n) and stops; its claim runs out in Redis; B claims it (a greater
 * fence) and writes to another system's table and HTTP service; A resumes and writes with n. The
 * row updated {@code WHERE fence < ?} and the service that answers 409 to a fence at or below the
 * highest it saw both refuse A; the row and the resource without the check take A's write over B's.
 *
 * <p>A whole frozen JVM cannot be had on one server whose other threads go on: here only A's thread
 * waits, and the server would keep renewing A's lease. So the test removes A's claim from Redis, the
 * state a lease that ran out during a freeze leaves ({@code LateHolderFencingTest} freezes the
 * renewals themselves instead).
 */
class FencingIT {

    private static final String BASE = "http://localhost:" + ItServer.PORT + "/itapp/api/fencing/";
    private static final Duration LIMIT = Duration.ofSeconds(60);
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static HttpRequest post(String path) {
        return HttpRequest.newBuilder(URI.create(BASE + path)).timeout(Duration.ofSeconds(90))
                .POST(HttpRequest.BodyPublishers.noBody()).build();
    }

    private static JsonObject json(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        return Json.createReader(new StringReader(r.body())).readObject();
    }

    private static JsonObject send(HttpRequest request) throws Exception {
        return json(HTTP.send(request, HttpResponse.BodyHandlers.ofString()));
    }

    private static JsonObject get(String path) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(BASE + path)).timeout(Duration.ofSeconds(30)).build());
    }

    @Test
    void aLateHoldersWritesAreRefusedWhereTheFenceIsCheckedAndLandWhereItIsNot() throws Exception {
        String transfer = "transfer-" + UUID.randomUUID();
        send(post(transfer + "/open"));

        CompletableFuture<HttpResponse<String>> a = HTTP.sendAsync(post(transfer + "/run/A"), HttpResponse.BodyHandlers.ofString());
        String key = await("holder A to hold the claim and stop", LIMIT, () -> get(transfer + "/paused"), p -> p.containsKey("key"))
                .getString("key");
        try (RedisClient redis = TestRedis.client()) {
            assertEquals(1, redis.del(key), "A's claim was in Redis");
        }

        JsonObject b = send(post(transfer + "/run/B"));
        send(post(transfer + "/resume"));
        JsonObject late = json(a.get(90, TimeUnit.SECONDS));

        JsonObject bWrites = b.getJsonObject("writes");
        JsonObject aWrites = late.getJsonObject("writes");
        assertEquals("PROCESSED", b.getString("outcome"), b.toString());
        long bFence = bWrites.getJsonNumber("fence").longValue();
        long aFence = aWrites.getJsonNumber("fence").longValue();
        assertTrue(bFence > aFence, "B's fence " + bFence + " above A's " + aFence);
        assertEquals(Json.createObjectBuilder().add("fence", bFence).add("checkedRows", 1).add("uncheckedRows", 1)
                .add("checkedStatus", 200).add("uncheckedStatus", 200).build(), bWrites, "B, the holder, writes everywhere");
        assertEquals(Json.createObjectBuilder().add("fence", aFence).add("checkedRows", 0).add("uncheckedRows", 1)
                .add("checkedStatus", 409).add("uncheckedStatus", 200).build(), aWrites,
                "A's late writes: refused where the fence is checked, landed where it is not");
        assertEquals(Json.createObjectBuilder().add("checkedRow", "B").add("uncheckedRow", "A")
                .add("checkedService", "B").add("uncheckedService", "A").build(), get(transfer + "/state"),
                "what each side keeps: B's writes where the fence is checked, A's stale ones over B's where it is not");
    }
}
