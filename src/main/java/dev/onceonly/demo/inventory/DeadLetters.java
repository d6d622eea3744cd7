package dev.onceonly.demo.inventory;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import dev.onceonly.rabbitmq.RabbitHeaders;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonException;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * The inventory consumer's dead-letter queue: every dead letter is counted and acknowledged, and
 * the last {@value #KEPT} are kept in memory for the page, which can send one back to the orders
 * queue. (A real system would alert on them and keep them where they survive a restart.)
 *
 * <p>What the page gets of a dead letter: the connector's reason headers, the body's SHA-256 and
 * size, and, when the body is a JSON object, its {@code sku} and {@code quantity} (demo data,
 * cut short). Never the body itself nor the {@code orderId}: that is the guard's key, which the page
 * shows only as a digest like everything else.
 */
@ApplicationScoped
public class DeadLetters {

    static final int KEPT = 50;
    /** Header values come from the connector, but a reason can be long (an exception's message). */
    private static final int MAX_HEADER = 300;
    private static final int MAX_FIELD = 40;
    /** The connector's headers worth reading; the signature and publish sequence mean nothing to a person. */
    private static final List<String> SHOWN = List.of(RabbitHeaders.OUTCOME, RabbitHeaders.REASON, RabbitHeaders.ATTEMPTS,
            RabbitHeaders.CONSUMER, RabbitHeaders.CHANNEL, RabbitHeaders.QUEUE, RabbitHeaders.ORIGINAL_EXCHANGE,
            RabbitHeaders.ORIGINAL_ROUTING_KEY);

    /**
     * One dead letter. {@code body} stays on the server (to send it back).
     *
     * @param id the dead letter's number since start, 1 for the first
     */
    record Letter(long id, long epochMillis, String body, String bodySha256, int bytes, Map<String, String> headers,
                  Optional<String> sku, Optional<String> quantity) {

        JsonObject toJson() {
            JsonObjectBuilder h = JSON.createObjectBuilder();
            headers.forEach(h::add);
            JsonObjectBuilder b = JSON.createObjectBuilder().add("id", id).add("time", epochMillis)
                    .add("bodySha256", bodySha256).add("bytes", bytes).add("headers", h);
            sku.ifPresent(s -> b.add("sku", s));
            quantity.ifPresent(q -> b.add("quantity", q));
            return b.build();
        }
    }

    private final AtomicLong received = new AtomicLong();
    /** By id, oldest first. Guarded by itself. */
    private final LinkedHashMap<Long, Letter> kept = new LinkedHashMap<>();

    /** Counted, kept, then acknowledged. */
    @Incoming("orders-dead-letters")
    public void onDeadLetter(String body, IncomingRabbitMetadata meta) {
        add(System.currentTimeMillis(), body, meta.headers());
    }

    Letter add(long epochMillis, String body, Map<String, Object> headers) {
        long id = received.incrementAndGet();
        Map<String, String> shown = new LinkedHashMap<>();
        for (String name : SHOWN) {
            Object v = headers.get(name);
            if (v != null) {
                shown.put(name, cut(v instanceof byte[] bytes ? "(" + bytes.length + " bytes)" : v.toString(), MAX_HEADER));
            }
        }
        byte[] raw = body.getBytes(StandardCharsets.UTF_8);
        Optional<JsonObject> json = jsonObject(body);
        Letter letter = new Letter(id, epochMillis, body, sha256(raw), raw.length, shown,
                json.flatMap(o -> field(o, "sku")), json.flatMap(o -> field(o, "quantity")));
        synchronized (kept) {
            kept.put(id, letter);
            if (kept.size() > KEPT) {
                kept.remove(kept.keySet().iterator().next());
            }
        }
        return letter;
    }

    /** {@return every dead letter received since start} */
    long received() {
        return received.get();
    }

    /** {@return the kept dead letters, newest first} */
    List<Letter> kept() {
        List<Letter> newestFirst;
        synchronized (kept) {
            newestFirst = new ArrayList<>(kept.values());
        }
        Collections.reverse(newestFirst);
        return newestFirst;
    }

    /** Takes a kept dead letter out of the list, so that it is sent back once however often the button is pressed. */
    Optional<Letter> take(long id) {
        synchronized (kept) {
            return Optional.ofNullable(kept.remove(id));
        }
    }

    /** Puts back a letter {@link #take taken} whose sending failed. */
    void putBack(Letter letter) {
        synchronized (kept) {
            kept.put(letter.id(), letter);
        }
    }

    static JsonArrayBuilder toJson(List<Letter> letters) {
        JsonArrayBuilder a = JSON.createArrayBuilder();
        letters.forEach(l -> a.add(l.toJson()));
        return a;
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static Optional<JsonObject> jsonObject(String body) {
        if (body.length() > Order.MAX_BODY_BYTES) { // larger than any order: not worth parsing
            return Optional.empty();
        }
        try (JsonReader reader = JSON.createReader(new StringReader(body))) {
            JsonValue v = reader.readValue();
            return v.getValueType() == JsonValue.ValueType.OBJECT ? Optional.of(v.asJsonObject()) : Optional.empty();
        } catch (JsonException e) {
            return Optional.empty();
        }
    }

    /** A field as JSON text ({@code "widget"} shows as {@code widget}, {@code -3} as {@code -3}), cut short. */
    private static Optional<String> field(JsonObject o, String name) {
        JsonValue v = o.get(name);
        if (v == null) {
            return Optional.empty();
        }
        String text = v.getValueType() == JsonValue.ValueType.STRING ? o.getString(name) : v.toString();
        return Optional.of(cut(text, MAX_FIELD));
    }

    private static String cut(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "...";
    }
}
