package dev.onceonly.demo.handwritten;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeoutException;

/**
 * What a team writes instead of an outbox: the handler publishes its event itself, persistent, with
 * a publisher confirm, and returns only once the broker confirmed it. No row, no relay — and no
 * guarantee that the event and the transaction agree when either fails: the outbox's reason to be.
 * One channel per consuming thread at a time (a channel's confirms are its own), kept for reuse.
 */
@ApplicationScoped
public class DirectPublisher {

    private static final long CONFIRM_TIMEOUT_MILLIS = 5_000;
    private static final AMQP.BasicProperties PERSISTENT_JSON = new AMQP.BasicProperties.Builder()
            .contentType("application/json").deliveryMode(2).build();

    @Inject
    @ConfigProperty(name = "onceonly.rabbitmq.host", defaultValue = "127.0.0.1")
    String host;

    @Inject
    @ConfigProperty(name = "onceonly.rabbitmq.port", defaultValue = "5672")
    int port;

    @Inject
    @ConfigProperty(name = "demo.exchange", defaultValue = "orders")
    String exchange;

    @Inject
    @ConfigProperty(name = "demo.reserved-routing-key", defaultValue = "order.reserved")
    String routingKey;

    private final BlockingQueue<Channel> idle = new ArrayBlockingQueue<>(64);
    private Connection connection;

    /** Publishes {@code json} as the order's {@code order.reserved} event and waits for its confirm. */
    public void publishReserved(String json) throws IOException, InterruptedException, TimeoutException {
        Channel channel = idle.poll();
        if (channel == null) {
            channel = connection().createChannel();
            channel.confirmSelect();
        }
        channel.basicPublish(exchange, routingKey, PERSISTENT_JSON, json.getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(CONFIRM_TIMEOUT_MILLIS);
        if (!idle.offer(channel)) {
            channel.close();
        }
    }

    private synchronized Connection connection() throws IOException, TimeoutException {
        if (connection == null) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost(host);
            factory.setPort(port);
            connection = factory.newConnection("bench-direct-publisher");
        }
        return connection;
    }

    @PreDestroy
    synchronized void close() throws IOException {
        if (connection != null) {
            connection.close();
        }
    }
}
