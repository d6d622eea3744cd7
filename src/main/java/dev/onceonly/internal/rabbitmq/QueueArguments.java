package dev.onceonly.internal.rabbitmq;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The optional queue arguments an incoming channel declares its queue with (validated with the
 * channel's other settings): what the application asked for beyond the queue type and the connector's
 * own dead-letter wiring.
 *
 * @param singleActiveConsumer {@code x-single-active-consumer}: the broker delivers to one consumer
 *                             at a time, the others wait as hot standbys
 * @param messageTtl           {@code x-message-ttl}, or {@code null} for none: a message not delivered
 *                             within it is dead-lettered by the broker
 * @param maxLength            {@code x-max-length} (ready messages), or {@code 0} for none
 * @param overflow             {@code x-overflow} ({@code drop-head}, {@code reject-publish},
 *                             {@code reject-publish-dlx}), or {@code null} for the broker's default
 *                             ({@code drop-head}); only set together with {@code maxLength}
 */
record QueueArguments(boolean singleActiveConsumer, Duration messageTtl, int maxLength, String overflow) {

    /** Nothing beyond the defaults. */
    static final QueueArguments NONE = new QueueArguments(false, null, 0, null);

    /** The overflow behaviours RabbitMQ knows, in the order the error message lists them. */
    static final String[] OVERFLOWS = {"drop-head", "reject-publish", "reject-publish-dlx"};

    /** RabbitMQ's largest {@code x-message-ttl}: its timers take at most 2^32 - 1 milliseconds. */
    static final long MAX_TTL_MILLIS = 4_294_967_295L;

    /**
     * Whether the broker may dead-letter messages on its own (expired, dropped from the head, or
     * refused with {@code reject-publish-dlx}): then even a classic queue gets the dead-letter
     * exchange as an argument, so such messages land in the channel's dead-letter queue instead of
     * being dropped.
     */
    boolean brokerDeadLetters() {
        return messageTtl != null || maxLength > 0 && !"reject-publish".equals(overflow);
    }

    /**
     * Whether the queue refuses messages once full ({@code reject-publish}, {@code
     * reject-publish-dlx}): a copy the broker dead-letters into it then, from a delay queue, is
     * dropped unless that delay queue dead-letters at least once.
     */
    boolean refusesWhenFull() {
        return maxLength > 0 && overflow != null && overflow.startsWith("reject-publish");
    }

    /** These arguments as {@code queue.declare} takes them, in a stable order. */
    Map<String, Object> asMap() {
        Map<String, Object> args = new LinkedHashMap<>();
        if (singleActiveConsumer) {
            args.put("x-single-active-consumer", true);
        }
        if (messageTtl != null) {
            args.put("x-message-ttl", messageTtl.toMillis());
        }
        if (maxLength > 0) {
            args.put("x-max-length", maxLength);
        }
        if (overflow != null) {
            args.put("x-overflow", overflow);
        }
        return args;
    }
}
