package dev.onceonly.testing;

import jakarta.json.Json;
import jakarta.json.JsonObject;

import java.io.StringReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The integration-test Liberty server: its port and the read-outs of its test consumers, the test
 * application of src/test/itapp that runs beside the demo at /itapp.
 */
public final class ItServer {

    public static final String PORT = System.getProperty("http.port", "9080");
    private static final String BASE = "http://localhost:" + PORT + "/itapp/api/it";
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private ItServer() {
    }

    public static String get(String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(BASE + path)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("GET " + path + " -> " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    public static String post(String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(BASE + path)).timeout(Duration.ofSeconds(90))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException("POST " + path + " -> " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    public static JsonObject postJson(String path) throws Exception {
        return Json.createReader(new StringReader(post(path))).readObject();
    }

    public static JsonObject json(String path) throws Exception {
        return Json.createReader(new StringReader(get(path))).readObject();
    }

    public static int deliveries(String consumer, String key) throws Exception {
        return Integer.parseInt(get("/deliveries?consumer=" + enc(consumer) + "&key=" + enc(key)));
    }

    public static int effects(String consumer, String key) throws Exception {
        return Integer.parseInt(get("/effects?consumer=" + enc(consumer) + "&key=" + enc(key)));
    }

    public static JsonObject summary(String consumer, String prefix) throws Exception {
        return json("/summary?consumer=" + enc(consumer) + "&prefix=" + enc(prefix));
    }

    public static JsonObject outcomes(String consumer) throws Exception {
        return json("/outcomes/" + consumer);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
