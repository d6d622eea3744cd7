package dev.onceonly.support;

import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonPointer;
import jakarta.json.JsonString;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonParsingException;

import java.io.ByteArrayInputStream;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads a key out of a JSON body with an RFC 6901 JSON Pointer (JSON-P). The only class that
 * touches JSON-P: it is loaded when a consumer uses the {@code json-pointer} key strategy, so an
 * application without that strategy needs no JSON-P feature.
 */
public final class JsonPointers {

    // The provider lookup is a service-loader scan: once, and only when a pointer is used.
    private final JsonProvider json = JsonProvider.provider();
    private final ConcurrentHashMap<String, JsonPointer> pointers = new ConcurrentHashMap<>();

    /**
     * Checks a pointer, at startup.
     *
     * @param pointer an RFC 6901 JSON Pointer, e.g. {@code /orderId}
     * @throws IllegalArgumentException when {@code pointer} is not a valid JSON Pointer
     */
    public void validate(String pointer) {
        try {
            pointer(pointer);
        } catch (JsonException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * Reads the key at {@code pointer} out of a JSON body.
     *
     * @param body the message body, JSON
     * @param pointer a valid RFC 6901 JSON Pointer (see {@link #validate})
     * @return the string or number at {@code pointer}, as text; {@code null} when there is no value
     *         or it is JSON {@code null}
     * @throws IllegalArgumentException with a reason that never quotes the body, when the body is
     *         not a JSON object or array or the value is neither a string nor a number
     */
    public String read(byte[] body, String pointer) {
        JsonValue root;
        try (var reader = json.createReader(new ByteArrayInputStream(body))) {
            root = reader.readValue();
        } catch (JsonParsingException e) {
            throw new IllegalArgumentException("payload is not valid JSON (at line " + e.getLocation().getLineNumber()
                    + ", column " + e.getLocation().getColumnNumber() + ")");
        } catch (JsonException e) {
            throw new IllegalArgumentException("payload is not valid JSON");
        }
        if (!(root instanceof JsonStructure structure)) {
            throw new IllegalArgumentException("payload is a JSON " + root.getValueType() + ", not an object or array");
        }
        JsonPointer p = pointer(pointer);
        if (!p.containsValue(structure)) {
            return null;
        }
        JsonValue value = p.getValue(structure);
        if (value instanceof JsonString str) {
            return str.getString();
        }
        if (value instanceof JsonNumber num) {
            return num.toString();
        }
        if (value.getValueType() == JsonValue.ValueType.NULL) {
            return null;
        }
        throw new IllegalArgumentException("value at " + pointer + " is a JSON " + value.getValueType()
                + "; a key must be a string or a number");
    }

    private JsonPointer pointer(String pointer) {
        return pointers.computeIfAbsent(pointer, json::createPointer);
    }
}
