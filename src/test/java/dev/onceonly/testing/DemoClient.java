package dev.onceonly.testing;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;

import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The demo's REST API as the load and chaos tools use it: readiness, {@code /api/stats}, plain
 * calls. {@code base} is the server's root, e.g. {@code http://localhost:9080}.
 */
public final class DemoClient {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    public DemoClient(String base) {
        this.base = base;
    }

    public String base() {
        return base;
    }

    /** Whether {@code /health/ready} answers 200 now (every part of the demo UP). */
    public boolean ready() {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(base + "/health/ready")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Waits for {@code /health/ready} to answer 200; fails with the last answer after {@code limit}. */
    public void awaitReady(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/health/ready"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
                last = r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(500);
        }
        throw new IllegalStateException("demo at " + base + " not ready after " + limit.toSeconds() + " s: " + last);
    }

    public JsonObject stats() throws Exception {
        return parse(call("GET", "/api/stats"));
    }

    /** A call without a body that must answer 200; returns the body. */
    public String call(String method, String path) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + path))
                        .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException(method + " " + path + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    public static JsonObject parse(String json) {
        try (JsonReader reader = Json.createReader(new StringReader(json))) {
            return reader.readObject();
        }
    }
}
