package dev.onceonly.demo.inventory;

import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Set;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * An order as it travels on the {@code orders} exchange: {@code {"orderId":"…","sku":"…","quantity":n}}.
 *
 * <p>Everything that arrives is checked before it may touch stock: a JSON object of at most
 * {@value #MAX_BODY_BYTES} bytes with exactly these three fields, {@code orderId} and {@code sku}
 * non-blank strings of at most {@value #MAX_ORDER_ID} and {@value #MAX_SKU} characters, and
 * {@code quantity} a whole number from 1 to {@value #MAX_QUANTITY}. Anything else is an
 * {@link InvalidOrderException}: without that check an order of {@code "quantity": -3} would add
 * three units to stock.
 */
public record Order(String orderId, String sku, int quantity) {

    public static final int MAX_BODY_BYTES = 4096;
    public static final int MAX_ORDER_ID = 100;
    /** The stock table's key column is 64 characters wide. */
    public static final int MAX_SKU = 64;
    public static final int MAX_QUANTITY = 1000;
    private static final Set<String> FIELDS = Set.of("orderId", "sku", "quantity");

    public Order {
        requireText("orderId", orderId, MAX_ORDER_ID);
        requireText("sku", sku, MAX_SKU);
        if (quantity < 1 || quantity > MAX_QUANTITY) {
            throw new InvalidOrderException("quantity must be between 1 and " + MAX_QUANTITY + ", got " + quantity);
        }
    }

    /** Parses and checks a message body; never returns an order that would be wrong to act on. */
    public static Order parse(String json) {
        if (json == null) {
            throw new InvalidOrderException("no body");
        }
        int bytes = json.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_BODY_BYTES) {
            throw new InvalidOrderException("body of " + bytes + " bytes, more than " + MAX_BODY_BYTES);
        }
        JsonObject o;
        try (JsonReader reader = JSON.createReader(new StringReader(json))) {
            JsonValue v = reader.readValue();
            if (v.getValueType() != JsonValue.ValueType.OBJECT) {
                throw new InvalidOrderException("body is a JSON " + v.getValueType().name().toLowerCase() + ", not an object");
            }
            o = v.asJsonObject();
        } catch (JsonException e) {
            throw new InvalidOrderException("body is not JSON: " + e.getMessage());
        }
        for (String field : o.keySet()) {
            if (!FIELDS.contains(field)) {
                throw new InvalidOrderException("unknown field '" + cut(field) + "'");
            }
        }
        return new Order(string(o, "orderId"), string(o, "sku"), quantity(o));
    }

    public String toJson() {
        return JSON.createObjectBuilder().add("orderId", orderId).add("sku", sku).add("quantity", quantity).build().toString();
    }

    private static String string(JsonObject o, String field) {
        JsonValue v = o.get(field);
        if (v == null || v.getValueType() == JsonValue.ValueType.NULL) {
            throw new InvalidOrderException(field + " is missing");
        }
        if (!(v instanceof JsonString s)) {
            throw new InvalidOrderException(field + " must be a string, got " + v.getValueType().name().toLowerCase());
        }
        return s.getString();
    }

    private static int quantity(JsonObject o) {
        JsonValue v = o.get("quantity");
        if (v == null || v.getValueType() == JsonValue.ValueType.NULL) {
            throw new InvalidOrderException("quantity is missing");
        }
        if (!(v instanceof JsonNumber n) || !n.isIntegral()) {
            throw new InvalidOrderException("quantity must be a whole number, got " + cut(v.toString()));
        }
        long q;
        try {
            q = n.longValueExact();
        } catch (ArithmeticException e) {
            throw new InvalidOrderException("quantity must be between 1 and " + MAX_QUANTITY + ", got " + cut(n.toString()));
        }
        if (q < 1 || q > MAX_QUANTITY) {
            throw new InvalidOrderException("quantity must be between 1 and " + MAX_QUANTITY + ", got " + q);
        }
        return (int) q;
    }

    private static void requireText(String field, String value, int max) {
        if (value == null || value.isBlank()) {
            throw new InvalidOrderException(field + " must not be blank");
        }
        if (value.length() > max) {
            throw new InvalidOrderException(field + " is " + value.length() + " characters, more than " + max);
        }
    }

    /** Reasons end up in dead-letter headers and logs: never more than a little of what was sent. */
    private static String cut(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }
}
