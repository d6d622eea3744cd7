package dev.onceonly.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.spi.OutboxPublisher;
import dev.onceonly.spi.OutboxRecord;
import dev.onceonly.support.LogId;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * The outbox relay's connection to the broker ({@code onceonly:outbox:publish@<instance>}): publishes
 * each row's message mandatory, with its message id and publisher confirms. Configured by the
 * connector-wide {@code onceonly.rabbitmq.*} settings, like every connection of the connector that
 * belongs to no channel. A nack or a return is the row's fault ({@link OutboxPublisher.Refused}); a
 * closed channel or a missing confirm is not.
 */
final class OutboxEndpoint extends RabbitEndpoint implements OutboxPublisher {

    private final Duration confirmTimeout;
    private volatile Connection connection;
    private volatile ConfirmingPublisher publisher;

    OutboxEndpoint(ConnectionSettings settings, Duration confirmTimeout, RabbitResources resources) {
        super("outbox", settings, resources);
        this.confirmTimeout = confirmTimeout;
    }

    @Override
    public boolean connected() {
        Connection c = connection;
        ConfirmingPublisher p = publisher;
        return c != null && c.isOpen() && p != null && p.isOpen();
    }

    @Override
    void open() throws IOException, TimeoutException {
        connection = Connections.open(connection(), name(), "publish", resources);
        publisher = new ConfirmingPublisher(connection, resources.executor(), resources.scheduler(), confirmTimeout);
        LogId.ONCE0508I.log(name(), "(per row)", connection().describe());
    }

    @Override
    void close() {
        ConfirmingPublisher p = publisher;
        if (p != null) {
            p.close();
        }
        Connections.closeQuietly(connection);
    }

    void stop() {
        synchronized (lifecycle) {
            stopping = true;
            close();
        }
    }

    @Override
    public CompletableFuture<Void> publish(OutboxRecord record) {
        ConfirmingPublisher p = publisher;
        if (p == null || !connected()) {
            return CompletableFuture.failedFuture(new IOException("the outbox relay is not connected to the broker"));
        }
        OutboxMessage m = record.message();
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder()
                .messageId(record.messageId())
                .correlationId(m.correlationId())
                .contentType(m.contentType())
                .deliveryMode(m.persistent() ? 2 : 1)
                .headers(m.headers().isEmpty() ? null : new HashMap<>(m.headers()))
                .build();
        return p.publish(m.exchange(), m.routingKey(), true, props, m.body()).exceptionallyCompose(failure -> {
            // Only the broker's verdict on this message counts against the row.
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (cause instanceof ConfirmingPublisher.Refusal) {
                return CompletableFuture.failedFuture(new Refused(cause.getMessage()));
            }
            return CompletableFuture.failedFuture(failure);
        });
    }
}
