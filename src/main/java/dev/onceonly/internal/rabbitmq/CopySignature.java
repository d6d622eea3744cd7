package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.internal.config.ConfigReader;
import dev.onceonly.internal.config.Property;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * Signs the retry copies the connector publishes and checks the signature of those it receives
 * ({@link RabbitHeaders#SIGNATURE}), so that only copies this connector made are believed: their
 * attempt count and the original exchange and routing key (which fix the content key). Anyone
 * allowed to publish to the default exchange could otherwise forge them — dead-letter a message on
 * its first failure, or take the content key of a future genuine message on an exchange they may
 * not write to, which would then be skipped as a duplicate.
 *
 * <p>Every instance consuming a queue must use the same key, {@code copy-signing-key}, which every
 * incoming channel needs ({@link #key}): there is no default. A key derived from the broker
 * credentials (as there once was) made every signed copy a test of guessed passwords at hash speed,
 * and a password change turned the copies in flight into "forgeries".
 *
 * <p>Copies live across restarts (a retry in flight, a copy waiting minutes in a delay queue, a
 * quorum queue's BUSY copy), so a changed key would turn the connector's own copies into
 * "forgeries". Besides its key, a signer therefore accepts {@code copy-signing-previous-keys}:
 * copies are signed with the current key only, and verified against it and then each of those.
 * Previous keys are held to no minimum length, so that a short key set before the minimum can be
 * rotated out without losing the copies signed with it.
 */
final class CopySignature {


    /** The least key material {@code copy-signing-key} may have: HMAC-SHA256's own 256 bits. */
    static final int MIN_KEY_BYTES = 32;
    private static final String HMAC = "HmacSHA256";
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    /** The current key, which signs; first to be tried when verifying. */
    private final SecretKeySpec key;
    /** Keys a copy may also be signed with; never sign. */
    private final List<SecretKeySpec> previousKeys;

    private CopySignature(byte[] key, List<String> previousKeys) {
        this.key = new SecretKeySpec(key, HMAC);
        this.previousKeys = previousKeys.stream()
                .map(k -> new SecretKeySpec(k.getBytes(StandardCharsets.UTF_8), HMAC)).toList();
    }

    /**
     * The signer of an incoming channel: its {@code copy-signing-key}, also accepting its
     * {@code copy-signing-previous-keys}.
     */
    static CopySignature of(IncomingSettings settings) {
        return new CopySignature(settings.copySigningKey().getBytes(StandardCharsets.UTF_8),
                settings.copySigningPreviousKeys());
    }

    /**
     * Reads {@code copy-signing-key}, which every incoming channel needs. The key is the string as
     * written, its UTF-8 bytes the HMAC's key (as before the minimum, so a key already in use signs
     * as it did); {@code openssl rand -base64 32} gives one of 44 bytes.
     *
     * @param config the channel's configuration
     * @param key the property, {@code copy-signing-key}
     * @return the key as written
     * @throws dev.onceonly.api.InvalidConfigurationException naming the property, never the key, when it is
     *         unset or shorter than {@link #MIN_KEY_BYTES} bytes
     */
    static String key(ConfigReader config, Property key) {
        String expected = "a key of at least " + MIN_KEY_BYTES + " bytes, the same on every instance consuming the "
                + "queue, for this channel or for every channel as " + ChannelProperties.CONNECTOR_PREFIX + key.key()
                + " (generate one with: openssl rand -base64 32)";
        String k = config.secret(key).orElseThrow(() -> config.invalid(key, null, expected));
        if (k.getBytes(StandardCharsets.UTF_8).length < MIN_KEY_BYTES) {
            throw config.invalid(key, null, expected);
        }
        return k;
    }

    /**
     * Reads {@code copy-signing-previous-keys}: a comma-separated list of keys, each trimmed (a key cannot hold a
     * comma or begin or end with white space), read as a secret like {@code copy-signing-key}.
     *
     * @param config the channel's configuration
     * @param previousKeys the property, {@code copy-signing-previous-keys}
     * @return the keys in the order written; empty when unset
     * @throws dev.onceonly.api.InvalidConfigurationException naming the property, never a key, when an entry is empty
     */
    static List<String> previousKeys(ConfigReader config, Property previousKeys) {
        Optional<String> raw = config.secret(previousKeys);
        if (raw.isEmpty()) {
            return List.of();
        }
        List<String> keys = new ArrayList<>();
        // -1: keep trailing empty entries, so that "k," is refused like "k,,j" rather than read as "k".
        for (String entry : raw.get().split(",", -1)) {
            if (entry.isBlank()) {
                throw config.invalid(previousKeys, null, "a comma-separated list of keys, none of them empty");
            }
            keys.add(entry.trim());
        }
        return List.copyOf(keys);
    }

    /** Signs with the current key. */
    String sign(String queue, int attempts, String exchange, String routingKey, byte[] body) {
        return sign(key, queue, attempts, exchange, routingKey, body);
    }

    private static String sign(SecretKeySpec key, String queue, int attempts, String exchange, String routingKey, byte[] body) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(key);
            // Length-prefixed fields: no two different field lists give the same input.
            for (String field : new String[] {queue, Integer.toString(attempts), exchange, routingKey}) {
                byte[] b = field.getBytes(StandardCharsets.UTF_8);
                mac.update(new byte[] {(byte) (b.length >>> 24), (byte) (b.length >>> 16), (byte) (b.length >>> 8), (byte) b.length});
                mac.update(b);
            }
            mac.update(body);
            return B64.encodeToString(mac.doFinal());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
        }
    }

    /**
     * Whether {@code signature} is this connector's for these fields, made with the current key or
     * one of the previous keys (tried in that order). Each comparison takes constant time; how many
     * keys were tried before one matched tells nothing about any key.
     */
    boolean verify(String signature, String queue, int attempts, String exchange, String routingKey, byte[] body) {
        if (signature == null) {
            return false;
        }
        byte[] given = signature.getBytes(StandardCharsets.US_ASCII);
        if (matches(key, given, queue, attempts, exchange, routingKey, body)) {
            return true;
        }
        for (SecretKeySpec previous : previousKeys) {
            if (matches(previous, given, queue, attempts, exchange, routingKey, body)) {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(SecretKeySpec key, byte[] given, String queue, int attempts, String exchange,
                                   String routingKey, byte[] body) {
        return MessageDigest.isEqual(sign(key, queue, attempts, exchange, routingKey, body).getBytes(StandardCharsets.US_ASCII), given);
    }

    /**
     * This signer's keys (the current one first, then the previous ones) turned into keys for
     * another kind of signature made with the same secret: each the HMAC-SHA256 of {@code purpose}
     * under the key, so that a signature of one kind is never one of another kind.
     *
     * @param purpose names the kind, never a copy's
     * @return the derived keys, the current one first
     */
    List<SecretKeySpec> keysFor(String purpose) {
        List<SecretKeySpec> keys = new ArrayList<>();
        keys.add(derived(key, purpose));
        previousKeys.forEach(k -> keys.add(derived(k, purpose)));
        return List.copyOf(keys);
    }

    private static SecretKeySpec derived(SecretKeySpec key, String purpose) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(key);
            return new SecretKeySpec(mac.doFinal(purpose.getBytes(StandardCharsets.UTF_8)), HMAC);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
        }
    }
}
