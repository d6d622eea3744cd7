package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.LongString;
import dev.onceonly.rabbitmq.RabbitHeaders;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * Signs headers the connector writes and checks them where they are read back, with the channel's
 * copy-signing key (and its previous keys, for what was signed before a change), derived for each
 * purpose ({@link CopySignature#keysFor}): one purpose's signature is never another's, nor a retry
 * copy's. Signed: the headers the purpose names, each present or absent, the name of the queue the
 * headers are believed on (carried in {@link RabbitHeaders#QUEUE}), and the body's SHA-256.
 * <ul>
 *   <li>{@linkplain #deadLetters Dead letters}: anyone allowed to publish to a dead-letter queue could
 *       otherwise plant a letter whose time stops the ledger purge for good
 *       ({@code x-onceonly-dead-lettered-at: 0}), or whose exchange and routing key make a replay
 *       publish a stranger's body with the application's credentials. A letter is believed only on
 *       the queue it names, so one cannot be moved from another channel's dead-letter queue.</li>
 *   <li>{@linkplain #replayStamps Replay stamps} and {@linkplain #replayDecisions replay decisions}:
 *       see {@link ReplayHeaders}.</li>
 * </ul>
 */
final class HeaderSignature {

    private static final String HMAC = "HmacSHA256";
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    /** What a dead letter's signature covers; a replay counts on, so its count is signed too. */
    private static final List<String> DEAD_LETTER = List.of(RabbitHeaders.QUEUE, RabbitHeaders.CHANNEL,
            RabbitHeaders.CONSUMER,
            RabbitHeaders.OUTCOME, RabbitHeaders.REASON, RabbitHeaders.ATTEMPTS, RabbitHeaders.ORIGINAL_EXCHANGE,
            RabbitHeaders.ORIGINAL_ROUTING_KEY, RabbitHeaders.DEAD_LETTER_ID, RabbitHeaders.DEAD_LETTERED_AT,
            RabbitHeaders.KEY_DIGEST, RabbitHeaders.REPLAYS);

    /** The current key first, which signs; the others only verify. */
    private final List<SecretKeySpec> keys;
    /** The headers signed, {@link RabbitHeaders#QUEUE} among them. */
    private final List<String> signed;
    /** Where the signature travels. */
    private final String signatureHeader;

    private HeaderSignature(CopySignature copies, String purpose, List<String> signed, String signatureHeader) {
        this.keys = copies.keysFor(purpose);
        this.signed = signed;
        this.signatureHeader = signatureHeader;
    }

    /**
     * {@return the signature of the dead-letter headers the connector writes, in
     * {@link RabbitHeaders#DEAD_LETTER_SIGNATURE}}
     */
    static HeaderSignature deadLetters(CopySignature copies) {
        return new HeaderSignature(copies, "onceonly-dead-letter-headers", DEAD_LETTER,
                RabbitHeaders.DEAD_LETTER_SIGNATURE);
    }

    /** {@return the signature of a replay's stamp ({@link ReplayHeaders#STAMP})} */
    static HeaderSignature replayStamps(CopySignature copies) {
        return new HeaderSignature(copies, "onceonly-replay-stamp",
                List.of(RabbitHeaders.QUEUE, RabbitHeaders.REPLAY_OF, ReplayHeaders.LETTER_AT, ReplayHeaders.REPLY_TO),
                ReplayHeaders.STAMP);
    }

    /** {@return the signature of a decision on a replay ({@link ReplayHeaders#DECISION_SIGNATURE})} */
    static HeaderSignature replayDecisions(CopySignature copies) {
        return new HeaderSignature(copies, "onceonly-replay-decision",
                List.of(RabbitHeaders.QUEUE, RabbitHeaders.REPLAY_OF, ReplayHeaders.STATUS, ReplayHeaders.DETAIL),
                ReplayHeaders.DECISION_SIGNATURE);
    }

    /** {@return the signature of these headers and this body, with the current key} */
    String sign(Map<String, Object> headers, byte[] body) {
        return B64.encodeToString(mac(keys.get(0), signed, headers, body));
    }

    /**
     * Whether {@code headers} carry a signature of this connector's over them and {@code body},
     * made for {@code queue}. Every key is tried, each comparison in constant time: the answer
     * tells nothing about which key, nor about any key.
     */
    boolean verify(Map<String, Object> headers, byte[] body, String queue) {
        byte[] given = bytes(headers.get(signatureHeader));
        if (given == null || !queue.equals(text(headers.get(RabbitHeaders.QUEUE)))) {
            return false;
        }
        boolean matched = false;
        for (SecretKeySpec key : keys) {
            matched |= MessageDigest.isEqual(B64.encodeToString(mac(key, signed, headers, body))
                    .getBytes(StandardCharsets.US_ASCII), given);
        }
        return matched;
    }

    private static byte[] mac(SecretKeySpec key, List<String> signed, Map<String, Object> headers, byte[] body) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(key);
            // Length-prefixed, an absent header apart from an empty one: no two header sets give one input.
            for (String name : signed) {
                byte[] v = bytes(headers.get(name));
                int n = v == null ? -1 : v.length;
                mac.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
                if (v != null) {
                    mac.update(v);
                }
            }
            mac.update(MessageDigest.getInstance("SHA-256").digest(body));
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 and SHA-256 are required by every Java platform", e);
        }
    }

    /**
     * A header's value as it travels: text as its UTF-8 bytes (a {@code String} when written, an
     * amqp-client {@code LongString} when read), a number in decimal (an int written may be read as
     * a long).
     */
    private static byte[] bytes(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof LongString s) {
            return s.getBytes();
        }
        if (v instanceof byte[] b) {
            return b;
        }
        if (v instanceof Number n) {
            return Long.toString(n.longValue()).getBytes(StandardCharsets.US_ASCII);
        }
        return v.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Object v) {
        byte[] b = bytes(v);
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
