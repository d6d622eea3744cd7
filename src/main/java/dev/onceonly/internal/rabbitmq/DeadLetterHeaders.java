package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.rabbitmq.RabbitHeaders;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;

/**
 * A dead letter as an operator sees it, read from the headers the connector (or whoever published
 * it) wrote: every value as hostile input, a missing or malformed one as unknown.
 */
final class DeadLetterHeaders {

    private DeadLetterHeaders() {
    }

    /**
     * @param channel  the channel whose dead-letter queue holds it
     * @param h        its headers
     * @param body     its body
     * @param verified whether the connector's signature vouches for the headers ({@link HeaderSignature})
     * @return what an operator sees of it
     */
    static DeadLetter read(String channel, Map<String, Object> h, byte[] body, boolean verified) {
        String sha = DeadLetterEndpoint.sha256(body);
        String id = text(h, RabbitHeaders.DEAD_LETTER_ID);
        Long at = number(h, RabbitHeaders.DEAD_LETTERED_AT);
        return new DeadLetter(id.isEmpty() ? "sha256:" + sha.substring(0, 16) : id, channel, text(h,
                RabbitHeaders.OUTCOME),
                text(h, RabbitHeaders.REASON), intOf(number(h, RabbitHeaders.ATTEMPTS)), text(h,
                        RabbitHeaders.CONSUMER),
                at == null ? null : Instant.ofEpochMilli(at), text(h, RabbitHeaders.KEY_DIGEST), sha, body.length,
                intOf(number(h, RabbitHeaders.REPLAYS)), nullable(h, RabbitHeaders.ORIGINAL_EXCHANGE),
                nullable(h, RabbitHeaders.ORIGINAL_ROUTING_KEY), verified);
    }

    private static String text(Map<String, Object> h, String name) {
        String v = nullable(h, name);
        return v == null ? "" : v;
    }

    /** Header strings arrive as amqp-client's {@code LongString} (or bytes): their text. */
    static String nullable(Map<String, Object> h, String name) {
        Object v = h.get(name);
        return v == null ? null : v instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : v.toString();
    }

    static Long number(Map<String, Object> h, String name) {
        Object v = h.get(name);
        if (v instanceof Number n) {
            return n.longValue();
        }
        try {
            return v == null ? null : Long.parseLong(v.toString());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static int intOf(Long v) {
        return v == null ? 0 : (int) Math.max(0, Math.min(Integer.MAX_VALUE, v));
    }
}
