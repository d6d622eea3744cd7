package dev.onceonly.rabbitmq;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * Signs the retry copies the connector publishes and checks the signature of those it receives
 * ({@link RabbitHeaders#SIGNATURE}), so that only copies this connector made are believed: their
 * attempt count and the original exchange and routing key (which fix the content key). Anyone
 * allowed to publish to the default exchange could otherwise forge them — dead-letter a message on
 * its first failure, or take the content key of a future genuine message on an exchange they may
 * not write to, which would then be skipped as a duplicate.
 *
 * <p>Every instance consuming a queue must use the same key: {@code copy-signing-key}, or by default
 * one derived from the channel's broker credentials and queue (instances of one deployment share
 * them). Whoever knows the broker password can consume and ack anyway, so that default adds no new
 * secret to keep.
 */
final class CopySignature {

    private static final String HMAC = "HmacSHA256";
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private final SecretKeySpec key;

    private CopySignature(byte[] key) {
        this.key = new SecretKeySpec(key, HMAC);
    }

    /**
     * The signer of an incoming channel: its {@code copy-signing-key}, or the key derived from its
     * credentials when none is configured.
     */
    static CopySignature of(IncomingSettings settings) {
        return settings.copySigningKey() != null ? withKey(settings.copySigningKey())
                : derived(settings.connection(), settings.queue());
    }

    /** A signer with the configured key. */
    static CopySignature withKey(String configuredKey) {
        return new CopySignature(configuredKey.getBytes(StandardCharsets.UTF_8));
    }

    /** The default signer: a key derived from the channel's credentials, virtual host and queue. */
    static CopySignature derived(ConnectionSettings c, String queue) {
        return new CopySignature(sha256("onceonly-copy-signing\0" + c.username() + '\0' + c.password() + '\0'
                + c.virtualHost() + '\0' + queue));
    }

    String sign(String queue, int attempts, String exchange, String routingKey, byte[] body) {
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

    /** Whether {@code signature} is this connector's for these fields; compared in constant time. */
    boolean verify(String signature, String queue, int attempts, String exchange, String routingKey, byte[] body) {
        if (signature == null) {
            return false;
        }
        return MessageDigest.isEqual(sign(queue, attempts, exchange, routingKey, body).getBytes(StandardCharsets.US_ASCII),
                signature.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
