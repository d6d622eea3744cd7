package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.TestRabbit;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** An outgoing channel outside any server, against the machine's RabbitMQ. */
class OutboundChannelTest {

    final String exchange = "onceonly.unit.out." + UUID.randomUUID();
    final String queue = exchange + ".q";
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    OutboundChannel channel;

    @AfterEach
    void close() throws Exception {
        if (channel != null) {
            channel.stop();
        }
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.deleteQueue(queue);
            rabbit.deleteExchange(exchange);
        }
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    /** Sends one message through the channel and returns how it was settled: null for ack, else the nack's reason. */
    private CompletableFuture<Throwable> send(String routingKey) throws Exception {
        return send(routingKey, Map.of("host", "127.0.0.1"));
    }

    /** Like {@link #send(String)}, with the broker given by {@code broker} (host, port, addresses). */
    private CompletableFuture<Throwable> send(String routingKey, Map<String, String> broker) throws Exception {
        Map<String, String> props = new HashMap<>(broker);
        props.putAll(Map.of("channel-name", "out", "exchange.name", exchange, "exchange.type", "direct", "routing-key", routingKey));
        channel = new OutboundChannel(TestChannelConfig.of(props, ChannelConfig.Direction.OUTGOING)
                .outgoing(), resources, () -> MessageTracing.NONE);
        CompletableFuture<Throwable> settled = new CompletableFuture<>();
        Message<String> message = Message.of("order", () -> {
            settled.complete(null);
            return CompletableFuture.completedFuture(null);
        }, reason -> {
            settled.complete(reason);
            return CompletableFuture.completedFuture(null);
        });
        channel.onSubscribe(new Subscription() {
            private boolean sent;

            @Override
            public void request(long n) {
                if (!sent) {
                    sent = true;
                    channel.onNext(message);
                }
            }

            @Override
            public void cancel() {
            }
        });
        channel.start();
        return settled;
    }

    /** Before, the broker confirmed an unroutable message and dropped it, and the send succeeded. */
    @Test
    void aMessageNoQueueTakesFailsItsSend() throws Exception {
        Throwable reason = send("nobody-binds-this").get(20, TimeUnit.SECONDS);
        assertInstanceOf(IOException.class, reason, String.valueOf(reason));
    }

    @Test
    void aRoutedMessageIsAckedOnceConfirmed() throws Exception {
        bindQueue();
        assertEquals(null, send("orders").get(20, TimeUnit.SECONDS));
        await("the message in its queue", java.time.Duration.ofSeconds(20), () -> TestRabbit.total(queue), n -> n == 1);
    }

    /**
     * Several broker addresses: amqp-client tries them in a shuffled order, so a node that does not
     * answer (port 1 here) is passed over for one that does, in whichever order they come. The
     * addresses replace host and port, which point at nothing here.
     */
    @Test
    void withSeveralAddressesTheChannelConnectsToANodeThatAnswers() throws Exception {
        bindQueue();
        for (int i = 1; i <= 3; i++) {
            assertEquals(null, send("orders", Map.of("addresses", "127.0.0.1:1,127.0.0.1:5672", "host", "127.0.0.1", "port", "1")).get(20, TimeUnit.SECONDS));
            channel.stop();
            int sent = i;
            await("message " + i + " in its queue", java.time.Duration.ofSeconds(20), () -> TestRabbit.total(queue), n -> n == sent);
        }
    }

    private void bindQueue() throws Exception {
        com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
        f.setHost("127.0.0.1");
        try (var c = f.newConnection(); var ch = c.createChannel()) {
            ch.exchangeDeclare(exchange, "direct", true);
            ch.queueDeclare(queue, true, false, false, null);
            ch.queueBind(queue, exchange, "orders");
        }
    }
}
