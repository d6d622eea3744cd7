package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import java.util.HashMap;
import java.util.Map;

/**
 * Dead letters as the connector signs them, for tests outside this package that make one up (the
 * integration tests, on a server's channel): signed with the key the channel's properties give.
 */
public final class SignedDeadLetters {

    private SignedDeadLetters() {
    }

    /**
     * @param channel the channel's properties as the connector reads them ({@code channel-name}, {@code queue.name},
     *                the connection's and {@code copy-signing-key} where set)
     * @param headers the dead-letter headers; {@code x-onceonly-queue} is set to the channel's queue
     * @param body    the dead letter's body
     * @return the headers with the channel's dead-letter signature
     */
    public static Map<String, Object> signed(Map<String, String> channel, Map<String, Object> headers, byte[] body) {
        IncomingSettings settings = TestChannelConfig.of(channel, ChannelConfig.Direction.INCOMING).incoming();
        Map<String, Object> signed = new HashMap<>(headers);
        signed.put(RabbitHeaders.QUEUE, settings.queue());
        signed.put(RabbitHeaders.DEAD_LETTER_SIGNATURE, HeaderSignature.deadLetters(CopySignature.of(settings)).sign(signed, body));
        return signed;
    }
}
