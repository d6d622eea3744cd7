package dev.onceonly.internal.support;

import jakarta.json.JsonArray;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonPointer;
import jakarta.json.JsonString;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonParsingException;

import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads values out of a JSON body with RFC 6901 JSON Pointers (JSON-P): a key's parts, and the
 * values a consumer's {@code conflict-fields} compare. The only class that touches JSON-P: it is
 * loaded when a consumer uses JSON Pointers, so an application without them needs no JSON-P feature.
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
     * Parses a body once, for any number of pointers.
     *
     * @param body the message body
     * @return the parsed body
     * @throws IllegalArgumentException with a reason that never quotes the body, when the body is
     *         not a JSON object or array, or one the parser cannot read (nested too deeply): any
     *         failure of the parser depends on the body alone, so it is the body's refusal
     */
    public Document parse(byte[] body) {
        JsonValue root;
        try (var reader = json.createReader(new ByteArrayInputStream(body))) {
            root = reader.readValue();
        } catch (JsonParsingException e) {
            throw new IllegalArgumentException("payload is not valid JSON (at line " + e.getLocation().getLineNumber()
                    + ", column " + e.getLocation().getColumnNumber() + ")");
        } catch (JsonException e) {
            throw new IllegalArgumentException("payload is not valid JSON");
        } catch (RuntimeException | StackOverflowError e) {
            // Not a JsonException: Parsson refuses a body nested past its depth limit (1,000) with a
            // plain RuntimeException, and a provider without a limit recurses until the stack
            // overflows (unwound by now). Either way the body alone decides; its message may quote it.
            throw new IllegalArgumentException("payload is not valid JSON, or nested too deeply to read ("
                    + e.getClass().getName() + ")");
        }
        if (!(root instanceof JsonStructure structure)) {
            throw new IllegalArgumentException("payload is a JSON " + root.getValueType() + ", not an object or array");
        }
        return new Document(structure);
    }

    private JsonPointer pointer(String pointer) {
        return pointers.computeIfAbsent(pointer, json::createPointer);
    }

    /** A parsed JSON body. */
    public final class Document {
        private final JsonStructure root;

        private Document(JsonStructure root) {
            this.root = root;
        }

        /**
         * The key at {@code pointer}.
         *
         * @param pointer a valid RFC 6901 JSON Pointer (see {@link #validate})
         * @return the string or number at {@code pointer}, as text; {@code null} when there is no
         *         value or it is JSON {@code null}
         * @throws IllegalArgumentException with a reason that never quotes the body, when the value
         *         is neither a string nor a number
         */
        public String key(String pointer) {
            JsonValue value = valueAt(pointer);
            if (value == null || value.getValueType() == JsonValue.ValueType.NULL) {
                return null;
            }
            if (value instanceof JsonString str) {
                return str.getString();
            }
            if (value instanceof JsonNumber num) {
                return num.toString();
            }
            throw new IllegalArgumentException("value at " + pointer + " is a JSON " + value.getValueType()
                    + "; a key must be a string or a number");
        }

        /**
         * The values at {@code pointers} in one canonical text, equal for two bodies exactly when
         * every one of these values is: objects with their members sorted by name (so member order
         * does not count), no insignificant whitespace, every character outside printable ASCII
         * escaped as {@code \\uXXXX} (so the text is exact), numbers as written ({@code 2} and
         * {@code 2.0} differ). Each value is prefixed with its length and a colon, an absent one is
         * {@code -}, so that values cannot shift into each other.
         *
         * @param pointers valid RFC 6901 JSON Pointers (see {@link #validate})
         * @return the canonical text
         * @throws IllegalArgumentException when a value is nested too deeply to write out (a parser
         *         without a depth limit let it through)
         */
        public String canonical(List<String> pointers) {
            try {
                return canonicalText(pointers);
            } catch (StackOverflowError e) {
                throw new IllegalArgumentException("a conflict field's value is nested too deeply to compare");
            }
        }

        private String canonicalText(List<String> pointers) {
            StringBuilder all = new StringBuilder();
            StringBuilder one = new StringBuilder();
            for (String p : pointers) {
                JsonValue value = valueAt(p);
                if (value == null) {
                    all.append('-');
                    continue;
                }
                one.setLength(0);
                write(value, one);
                all.append(one.length()).append(':').append(one);
            }
            return all.toString();
        }

        private JsonValue valueAt(String pointer) {
            JsonPointer p = pointer(pointer);
            return p.containsValue(root) ? p.getValue(root) : null;
        }
    }

    private static void write(JsonValue value, StringBuilder out) {
        switch (value.getValueType()) {
            case OBJECT -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<String, JsonValue> member : new TreeMap<>((JsonObject) value).entrySet()) {
                    out.append(first ? "" : ",");
                    first = false;
                    writeString(member.getKey(), out);
                    out.append(':');
                    write(member.getValue(), out);
                }
                out.append('}');
            }
            case ARRAY -> {
                out.append('[');
                boolean first = true;
                for (JsonValue element : (JsonArray) value) {
                    out.append(first ? "" : ",");
                    first = false;
                    write(element, out);
                }
                out.append(']');
            }
            case STRING -> writeString(((JsonString) value).getString(), out);
            // As written: normalising 2.0 to 2 would cost time quadratic in the digits of a crafted number.
            case NUMBER -> out.append(value);
            default -> out.append(value); // true, false, null
        }
    }

    private static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                out.append("\\u");
                for (int shift = 12; shift >= 0; shift -= 4) {
                    out.append(Character.forDigit((c >> shift) & 0xf, 16));
                }
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
