package dev.onceonly.internal.outbox.jpa;

import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;

import java.io.StringReader;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A message's headers as the outbox table stores them (column {@code headers}). */
final class OutboxHeaders {

    /** The stored form of no headers, the usual case: written and read without JSON-P. */
    private static final String NO_HEADERS = "{}";

    /**
     * The JSON-P provider, looked up once, on the first message with headers: every {@code Json.create…}
     * call is a service-loader scan (about 85 µs for writing and reading empty headers once each,
     * measured), and an application whose messages have no headers needs no JSON-P at all.
     */
    private static final class Json {
        static final JsonProvider PROVIDER = JsonProvider.provider();
    }

    private OutboxHeaders() {
    }

    /**
     * Headers as a JSON object whose values say their type ({@code {"s": "text"}}, {@code {"i": 1}},
     * {@code {"l": 1}}, {@code {"b": true}}): amqp-client encodes an Integer and a Long differently,
     * and a consumer may tell them apart.
     */
    static String toJson(Map<String, Object> headers) {
        if (headers.isEmpty()) {
            return NO_HEADERS;
        }
        JsonObjectBuilder b = Json.PROVIDER.createObjectBuilder();
        headers.forEach((name, value) -> {
            JsonObjectBuilder typed = Json.PROVIDER.createObjectBuilder();
            if (value instanceof String text) {
                typed.add("s", text);
            } else if (value instanceof Integer i) {
                typed.add("i", i);
            } else if (value instanceof Long l) {
                typed.add("l", l);
            } else if (value instanceof Boolean bool) {
                typed.add("b", bool);
            } else {
                throw new IllegalArgumentException("header '" + name + "' of type " + value.getClass().getName());
            }
            b.add(name, typed);
        });
        return b.build().toString();
    }

    static Map<String, Object> fromJson(String json) {
        if (json == null || json.isEmpty() || json.equals(NO_HEADERS)) {
            return Map.of();
        }
        Map<String, Object> headers = new LinkedHashMap<>();
        JsonObject o;
        try (JsonReader reader = Json.PROVIDER.createReader(new StringReader(json))) {
            o = reader.readObject();
        }
        o.forEach((name, typed) -> {
            Map.Entry<String, JsonValue> e = typed.asJsonObject().entrySet().iterator().next();
            headers.put(name, switch (e.getKey()) {
                case "s" -> ((JsonString) e.getValue()).getString();
                case "i" -> ((JsonNumber) e.getValue()).intValueExact();
                case "l" -> ((JsonNumber) e.getValue()).longValueExact();
                case "b" -> e.getValue() == JsonValue.TRUE;
                default -> throw new IllegalStateException("outbox header '" + name + "' has unknown type " + e.getKey());
            });
        });
        return Collections.unmodifiableMap(headers);
    }
}
