package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.support.LogId;

import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The AMQP consumer of one incoming channel: turns each broker delivery into a {@link Delivery}
 * (metadata, payload, attempt number) and hands it to the channel. One AMQP channel, hence one
 * delivery at a time.
 */
final class QueueConsumer extends DefaultConsumer {

    private final IncomingSettings settings;
    private final Consumer<Delivery> deliveries;
    private final CopySignature signature;
    private final Supplier<MessageTracing> tracing;
    private final Consumer<String> lost;
    private final Runnable countingQueue;
    private final Delivery.ChannelGeneration generation = new Delivery.ChannelGeneration();
    /** Registered with the broker and not cancelled or closed since. */
    private volatile boolean consuming;

    /**
     * @param countingQueue told when a delivery shows the queue counts requeues though it is
     *             configured as classic
     * @param lost told when the broker closed this consumer's AMQP channel on its own (the connection
     *             stayed up: amqp-client will not recover it) or cancelled the consumer
     */
    QueueConsumer(Channel channel, IncomingSettings settings, CopySignature signature, Supplier<MessageTracing> tracing,
                  Consumer<Delivery> deliveries, Consumer<String> lost, Runnable countingQueue) {
        super(channel);
        this.settings = settings;
        this.signature = signature;
        this.tracing = tracing;
        this.deliveries = deliveries;
        this.lost = lost;
        this.countingQueue = countingQueue;
    }

    @Override
    public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties, byte[] body) {
        Map<String, Object> headers = properties.getHeaders() == null ? Map.of() : properties.getHeaders();
        // Only the broker's own count, and only where the broker keeps one: on a classic queue, or on
        // a first delivery (the broker adds its count to redeliveries only), the header can only be
        // the publisher's, and would spend attempts the message never had.
        int returned = settings.queueType() == QueueType.QUORUM && envelope.isRedeliver()
                ? intHeader(headers, RabbitHeaders.DELIVERY_COUNT) : 0;
        if (returned == 0 && envelope.isRedeliver() && headers.containsKey(RabbitHeaders.DELIVERY_COUNT)) {
            // A broker-counted redelivery on a queue configured as classic: the queue is a quorum
            // queue (declare=false, or declared elsewhere), where requeues count.
            countingQueue.run();
        }
        String exchange = envelope.getExchange();
        String routingKey = envelope.getRoutingKey();
        int retries = 0;
        boolean forged = false;
        // A retry copy came through the default exchange; if this connector made it (signature), its
        // count and the original's exchange and routing key are believed, keeping the content key
        // stable across attempts. Any other such message is not let through.
        if (exchange.isEmpty() && headers.containsKey(RabbitHeaders.RETRY_ATTEMPTS)) {
            int claimed = intHeader(headers, RabbitHeaders.RETRY_ATTEMPTS);
            String originalExchange = stringHeader(headers, RabbitHeaders.ORIGINAL_EXCHANGE, "");
            String originalRoutingKey = stringHeader(headers, RabbitHeaders.ORIGINAL_ROUTING_KEY, "");
            if (signature.verify(stringHeader(headers, RabbitHeaders.SIGNATURE, null), settings.queue(), claimed,
                    originalExchange, originalRoutingKey, body)) {
                retries = claimed;
                exchange = originalExchange;
                routingKey = originalRoutingKey;
            } else {
                forged = true;
            }
        }
        IncomingRabbitMetadata metadata = new IncomingRabbitMetadata(settings.channel(), settings.queue(), exchange,
                routingKey, envelope.isRedeliver(), envelope.getDeliveryTag(), properties, body, 1 + retries + returned);
        deliveries.accept(new Delivery(getChannel(), metadata, settings.payloadType().of(body), generation, forged, tracing.get()));
    }

    boolean isConsuming() {
        return consuming && getChannel().isOpen();
    }

    @Override
    public void handleConsumeOk(String consumerTag) {
        super.handleConsumeOk(consumerTag);
        consuming = true;
    }

    @Override
    public void handleRecoverOk(String consumerTag) {
        super.handleRecoverOk(consumerTag);
        consuming = true;
    }

    @Override
    public void handleShutdownSignal(String consumerTag, ShutdownSignalException sig) {
        consuming = false;
        generation.next();
        // A connection failure (hard error) is amqp-client's to recover, channel and consumer included.
        if (!sig.isHardError() && !sig.isInitiatedByApplication()) {
            lost.accept("the broker closed the consuming channel: " + sig.getMessage());
        }
    }

    @Override
    public void handleCancel(String consumerTag) {
        consuming = false;
        LogId.ONCE0509W.log(settings.channel(), consumerTag, settings.queue());
        lost.accept("the broker cancelled the consumer");
        Connections.closeQuietly(getChannel()); // a new channel and consumer replace it
    }

    private static int intHeader(Map<String, Object> headers, String name) {
        return headers.get(name) instanceof Number n ? (int) Math.max(0, Math.min(n.longValue(), Integer.MAX_VALUE / 2)) : 0;
    }

    private static String stringHeader(Map<String, Object> headers, String name, String fallback) {
        Object v = headers.get(name);
        return v == null ? fallback : v.toString(); // LongString.toString() is its UTF-8 text
    }
}
