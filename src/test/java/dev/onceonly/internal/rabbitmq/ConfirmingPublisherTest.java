package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.onceonly.testing.TestRabbit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Publisher confirms against the machine's RabbitMQ. */
class ConfirmingPublisherTest {

    final String queue = "onceonly.unit.publisher." + UUID.randomUUID();
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final ExecutorService completions = resources.executor();
    final ScheduledThreadPoolExecutor scheduler = (ScheduledThreadPoolExecutor) resources.scheduler();
    Connection connection;

    @AfterEach
    void close() throws Exception {
        try (TestRabbit rabbit = new TestRabbit()) {
            rabbit.deleteQueue(queue);
        }
        if (connection != null) {
            connection.abort();
        }
        completions.shutdownNow();
        scheduler.shutdownNow();
    }

    private ConfirmingPublisher publisher() throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        connection = f.newConnection();
        try (var ch = connection.createChannel()) {
            ch.queueDeclare(queue, false, false, true, null);
        }
        return new ConfirmingPublisher(connection, completions, scheduler, Duration.ofSeconds(30));
    }

    /** Each publish's timeout task leaves the scheduler once its confirm came (it stayed for the whole timeout). */
    @Test
    void confirmedPublishesLeaveNoTimeoutBehind() throws Exception {
        ConfirmingPublisher p = publisher();
        List<CompletableFuture<Void>> confirms = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            confirms.add(p.publish("", queue, true, new AMQP.BasicProperties(), ("m" + i).getBytes(StandardCharsets.UTF_8)));
        }
        CompletableFuture.allOf(confirms.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
        // Completion (and with it the cancel) runs on the completions pool: let it finish.
        completions.shutdown();
        completions.awaitTermination(10, TimeUnit.SECONDS);
        assertEquals(0, scheduler.getQueue().size(), "timeout tasks still queued");
    }

    /** Mandatory and unroutable: the publish fails instead of the message vanishing. */
    @Test
    void anUnroutableMandatoryPublishFails() throws Exception {
        ConfirmingPublisher p = publisher();
        ExecutionException e = assertThrows(ExecutionException.class, () -> p.publish("amq.direct", "nowhere-" + UUID.randomUUID(),
                true, new AMQP.BasicProperties(), new byte[] {1}).get(20, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, e.getCause());
    }

    /**
     * Publishing while the connector stops (its scheduler shut down) fails the returned future like
     * any other failed publish, so the caller's completion runs (the scheduler's refusal escaped
     * from {@code publish} itself, past the caller's handling).
     */
    @Test
    void aPublishWhileStoppingFailsItsFutureAndThrowsNothing() throws Exception {
        ConfirmingPublisher p = publisher();
        scheduler.shutdownNow();
        CompletableFuture<Void> confirmed = p.publish("", queue, true, new AMQP.BasicProperties(), new byte[] {1});
        ExecutionException e = assertThrows(ExecutionException.class, () -> confirmed.get(5, TimeUnit.SECONDS));
        assertInstanceOf(java.util.concurrent.RejectedExecutionException.class, e.getCause());
    }
}
