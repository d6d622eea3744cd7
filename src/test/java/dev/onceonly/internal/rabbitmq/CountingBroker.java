package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.onceonly.spi.MessageTracing;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Deliveries of one AMQP channel that exists only in memory and counts the settlements it is sent
 * (basicAck, basicNack, basicReject) per delivery tag: for model checking ({@code *LincheckTest}),
 * where a real broker's threads would be outside the checker's control. The deliveries are the
 * connector's own {@link Delivery} objects, as {@link QueueConsumer} makes them. Thread-safe.
 */
final class CountingBroker {

    private final AtomicIntegerArray settlements;
    private final Channel channel;
    private final Delivery.ChannelGeneration generation = new Delivery.ChannelGeneration();

    /** @param deliveries how many delivery tags (1 to {@code deliveries}) it hands out */
    CountingBroker(int deliveries) {
        this.settlements = new AtomicIntegerArray(deliveries + 1);
        this.channel = (Channel) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Channel.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "basicAck", "basicNack", "basicReject" -> {
                        settlements.incrementAndGet((int) (long) (Long) args[0]);
                        yield null;
                    }
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "counting channel";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /**
     * {@return delivery {@code tag} of queue "q", a first attempt; its payload a string of its own
     * identity, equal to every other delivery's}
     */
    Delivery delivery(int tag) {
        IncomingRabbitMetadata metadata = new IncomingRabbitMetadata("unit", "q", "", "q", false, tag,
                new AMQP.BasicProperties(), new byte[] {(byte) tag}, 1);
        return new Delivery(channel, metadata, new String("body"), generation, false, MessageTracing.NONE);
    }

    /** {@return how many times delivery {@code tag} was acked, nacked or rejected} */
    int settlements(int tag) {
        return settlements.get(tag);
    }
}
