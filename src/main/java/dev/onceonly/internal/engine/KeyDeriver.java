package dev.onceonly.internal.engine;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.support.JsonPointers;
import dev.onceonly.internal.support.Utf8;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Derives {@link MessageKey}s. The strategy key is built so that no input can forge another one:
 * each strategy has its own tag, exchange and routing key are escaped ({@code %} and {@code :})
 * and capped at 255 characters (the AMQP limit), so {@code "a:b" + "c"} and {@code "a" + "b:c"}
 * differ; the parts of a composite key are length-prefixed under a tag of their own. The strategy
 * key is then hashed to a fixed 128-bit digest, which keeps claim-store keys short whatever the
 * input and keeps message content out of the store's key space.
 */
public final class KeyDeriver {

    /** Consumer names: they become part of store keys and property names. */
    public static final Pattern CONSUMER_NAME = Pattern.compile("[A-Za-z0-9._-]{1,100}");
    /** AMQP short strings (exchange, routing key) are at most 255 octets. */
    static final int MAX_NAME_LENGTH = 255;
    /** Upper bound on explicit keys (message-id, header, pointer, parameter). */
    private static final int MAX_EXPLICIT_KEY_LENGTH = 1024;
    /** Bytes of the compared hash kept as claim fingerprint: enough to tell two bodies apart. */
    private static final int FINGERPRINT_BYTES = 9;

    private static final byte[] CONTENT_TAG = {'c', ':'};
    /** Tags the canonical text of the conflict fields before it is hashed. */
    private static final byte[] FIELDS_TAG = {'f', ':'};
    /**
     * Marks a header value that is not valid UTF-8 (base64 of its bytes follows). It starts with
     * U+FFFD, which valid text decoded from a header never starts a key with by accident.
     */
    private static final String INVALID_UTF8_TAG = "\uFFFDbytes:";
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private final String prefix;
    /** Created on first use: an application without JSON-Pointer keys never loads JSON-P. */
    private volatile JsonPointers json;

    /** @param prefix prefix of every store key, e.g. {@code oo:} */
    public KeyDeriver(String prefix) {
        this.prefix = prefix;
    }

    /**
     * Derives the key of one message for one consumer, and what a copy under that key is compared on.
     *
     * @param settings     the consumer's settings: its key strategy and conflict policy
     * @param message      the message as delivered
     * @param parameterKey value of the {@code @IdempotencyKey} parameter, or {@code null}
     * @return the key
     * @throws KeyRejectedException when no key can be derived, or the conflict fields cannot be read;
     *         the message is REJECTED
     */
    public MessageKey derive(ConsumerSettings settings, MessageView message, Object parameterKey) {
        Object[] scratch = DigestScratch.get();
        MessageDigest md = DigestScratch.digest(scratch);
        md.reset(); // not redundant: a derivation rejected halfway leaves its pieces in the thread's digest
        JsonPointers.Document json = settings.keyStrategy() == KeyStrategy.JSON_POINTER ? parse(body(message), "")
                : null;
        String explicit = explicitKey(settings, message, parameterKey, json);
        if (explicit == null) {
            byte[] bodySha = md.digest(body(message));
            // The content key "c:<exchange>:<routing key>:<hex sha256(body)>", fed to the digest piece
            // by piece: the same digest as hashing the whole string, without building it.
            md.update(CONTENT_TAG);
            md.update(escape(message.exchange(), "exchange").getBytes(StandardCharsets.UTF_8));
            md.update((byte) ':');
            md.update(escape(message.routingKey(), "routing key").getBytes(StandardCharsets.UTF_8));
            md.update((byte) ':');
            md.update(DigestScratch.hex(scratch, bodySha));
            String digest = DigestScratch.base64Digest(scratch, md);
            // The key covers the body: no fingerprint; the ledger keeps the body's hash.
            return new MessageKey(prefix + settings.consumer() + ':' + digest, digest, "", bodySha);
        }
        md.update(explicit.getBytes(StandardCharsets.UTF_8));
        String digest = DigestScratch.base64Digest(scratch, md);
        byte[] compared = compared(settings, message, json, md);
        String fingerprint = compared == null ? "" : B64.encodeToString(Arrays.copyOf(compared, FINGERPRINT_BYTES));
        return new MessageKey(prefix + settings.consumer() + ':' + digest, digest, fingerprint, compared);
    }

    /**
     * What a copy under an explicit key must match: the body's hash, the hash of the canonical values
     * at the conflict fields, or nothing ({@code conflict=ignore}). Computed once here and used by
     * every layer (the claim's fingerprint, the ledger's hash), so that they decide alike.
     */
    private byte[] compared(ConsumerSettings s, MessageView message, JsonPointers.Document parsed, MessageDigest md) {
        if (s.conflict() == ConflictPolicy.IGNORE) {
            return null;
        }
        if (s.conflictFields().isEmpty()) {
            return md.digest(body(message));
        }
        JsonPointers.Document json = parsed != null ? parsed : parse(body(message), "conflict-fields need a JSON "
                + "body: ");
        String canonical;
        try {
            canonical = json.canonical(s.conflictFields());
        } catch (IllegalArgumentException e) {
            throw new KeyRejectedException(e.getMessage());
        }
        md.reset();
        md.update(FIELDS_TAG);
        return md.digest(canonical.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The body, read only by a derivation that needs it (the content key, a JSON Pointer, a
     * comparison): a transport that cannot give it safely (a JMS {@code ObjectMessage}, which only
     * Java deserialization would open) says why, and the message is refused with that reason.
     */
    private static byte[] body(MessageView message) {
        try {
            return message.body();
        } catch (UnsupportedOperationException e) {
            throw new KeyRejectedException(e.getMessage());
        }
    }

    /**
     * Compiles a JSON Pointer, failing with {@link IllegalArgumentException} when its syntax is invalid.
     *
     * @param pointer an RFC 6901 JSON Pointer, e.g. {@code /orderId}
     */
    public void validatePointer(String pointer) {
        json().validate(pointer);
    }

    /** @return the tagged explicit key, or {@code null} for the content key */
    private String explicitKey(ConsumerSettings s, MessageView m, Object parameterKey, JsonPointers.Document json) {
        String explicit = switch (s.keyStrategy()) {
            case CONTENT -> null;
            case MESSAGE_ID -> present(m.messageId(), s, "message has no message-id", null);
            case HEADER -> parts(s, name -> headerText(m.headers().get(name)), "message has no header '%s'");
            case JSON_POINTER -> parts(s, pointer -> pointerValue(json, pointer), "payload has no value at %s");
            case PARAMETER -> present(parameterKey == null ? null : parameterKey.toString(), s, "@IdempotencyKey parameter is null or blank", null);
            case DEFAULT -> throw new IllegalStateException("unresolved key strategy");
        };
        if (explicit != null) {
            if (explicit.length() > MAX_EXPLICIT_KEY_LENGTH) {
                throw new KeyRejectedException("key is longer than " + MAX_EXPLICIT_KEY_LENGTH + " characters");
            }
            // The tag keeps keys of different strategies apart: message-id "x" is not header value "x".
            return tag(s.keyStrategy(), s.keyParts().size() > 1) + explicit;
        }
        return null;
    }

    /**
     * The key of a header or JSON-Pointer consumer: one part's value as it is (the key of every
     * version before composite keys), several parts each as {@code <UTF-8 length>:<value>}, so that
     * no value can shift into its neighbour ({@code "a,b"+"c"} is not {@code "a"+"b,c"}).
     *
     * @param missing the reason when a part is missing, {@code %s} standing for its header or pointer
     * @return the key, or null when a part is missing and the consumer falls back to the content key
     */
    private static String parts(ConsumerSettings s, Function<String, String> value, String missing) {
        List<String> parts = s.keyParts();
        if (parts.size() == 1) {
            return present(value.apply(parts.get(0)), s, missing, parts.get(0));
        }
        StringBuilder key = new StringBuilder();
        for (String part : parts) {
            String v = present(value.apply(part), s, missing, part);
            if (v == null) {
                return null;
            }
            key.append(v.getBytes(StandardCharsets.UTF_8).length).append(':').append(v);
        }
        return key.toString();
    }

    /**
     * @param reason why the key is missing, {@code %s} standing for {@code part} (formatted only then)
     * @return the value, or null when missing and the consumer falls back to the content key
     */
    private static String present(String value, ConsumerSettings s, String reason, String part) {
        if (value != null && !value.isBlank()) {
            return value;
        }
        if (s.fallbackToContent()) {
            return null;
        }
        throw new KeyRejectedException(String.format(reason, part));
    }

    /** A composite key has a tag of its own: no composite can equal a single value's key. */
    private static String tag(KeyStrategy strategy, boolean composite) {
        return switch (strategy) {
            case MESSAGE_ID -> "m:";
            case HEADER -> composite ? "h+:" : "h:";
            case JSON_POINTER -> composite ? "j+:" : "j:";
            case PARAMETER -> "p:";
            default -> throw new IllegalStateException(strategy.name());
        };
    }

    /**
     * A header value as key text, byte-exact and independent of the platform: text as it is; bytes
     * as their UTF-8 text when they are valid UTF-8, else tagged base64 (decoding with replacement
     * made different bytes one key); a {@link java.util.Date} as an ISO-8601 UTC instant
     * ({@code Date.toString()} depends on the time zone); numbers and booleans as written.
     */
    private static String headerText(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof byte[] bytes) {
            String text = Utf8.strict(bytes);
            return text != null ? text : INVALID_UTF8_TAG + Base64.getEncoder().encodeToString(bytes);
        }
        if (value instanceof java.util.Date date) {
            return date.toInstant().toString();
        }
        return value.toString();
    }

    private static String pointerValue(JsonPointers.Document json, String pointer) {
        try {
            return json.key(pointer);
        } catch (IllegalArgumentException e) {
            throw new KeyRejectedException(e.getMessage());
        }
    }

    /** @param context what needed the JSON, before the parser's reason (which never quotes the body) */
    private JsonPointers.Document parse(byte[] body, String context) {
        try {
            return json().parse(body);
        } catch (IllegalArgumentException e) {
            throw new KeyRejectedException(context + e.getMessage());
        }
    }

    private JsonPointers json() {
        if (json == null) {
            json = new JsonPointers(); // a race makes two, each as good: no lock on the key's path
        }
        return json;
    }

    private static String escape(String name, String what) {
        if (name.length() > MAX_NAME_LENGTH) {
            throw new KeyRejectedException(what + " is longer than " + MAX_NAME_LENGTH + " characters");
        }
        // String.replace returns the name itself when it holds neither: no copy for the usual name.
        return name.replace("%", "%25").replace(":", "%3A");
    }
}
