package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.outbox.OutboxPublisher;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.support.LogId;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

/**
 * The outbox relay's connection to the broker ({@code onceonly:outbox:publish@<instance>}): publishes
 * each row's message mandatory, with its message id and publisher confirms. Configured by the
 * connector-wide {@code onceonly.rabbitmq.*} settings, like every connection of the connector that
 * belongs to no channel. A nack, a return or a missing exchange is the row's fault
 * ({@link OutboxPublisher.Refused}); a closed connection or a missing confirm is not.
 *
 * <p>Exchanges are checked (passively declared) before the first publish to each: publishing to an
 * exchange that does not exist makes the broker close the channel, failing every publish awaiting
 * its confirm on it, with no way to tell which row was at fault. A channel closed all the same (the
 * exchange deleted since) is opened again on the next publish.
 */
final class OutboxEndpoint extends RabbitEndpoint implements OutboxPublisher {

    private final Duration confirmTimeout;
    private final Set<String> knownExchanges = ConcurrentHashMap.newKeySet();
    private volatile Connection connection;
    private volatile ConfirmingPublisher publisher;

    OutboxEndpoint(ConnectionSettings settings, Duration confirmTimeout, RabbitResources resources) {
        super("outbox", settings, resources);
        this.confirmTimeout = confirmTimeout;
    }

    @Override
    public boolean connected() {
        Connection c = connection;
        return c != null && c.isOpen() && publisher != null;
    }

    @Override
    void open() throws IOException, TimeoutException {
        connection = resources.open(connection(), name(), "publish");
        publisher = new ConfirmingPublisher(connection, resources.executor(), resources.scheduler(), confirmTimeout);
        LogId.ONCE0508I.log(name(), "(each row's own)", connection().describe());
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
        OutboxMessage m = record.message();
        ConfirmingPublisher p;
        try {
            p = openPublisher();
            if (!m.exchange().isEmpty() && !knownExchanges.contains(m.exchange())) {
                checkExchange(m.exchange());
            }
        } catch (IOException | RuntimeException e) { // Refused: the exchange is missing
            return CompletableFuture.failedFuture(e);
        }
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder()
                .messageId(record.messageId())
                .correlationId(m.correlationId())
                .contentType(m.contentType())
                .deliveryMode(m.persistent() ? 2 : 1)
                .headers(m.headers().isEmpty() ? null : new HashMap<>(m.headers()))
                .build();
        return p.publish(m.exchange(), m.routingKey(), true, props, m.body()).exceptionallyCompose(failure -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            // Only the broker's verdict on this message counts against the row.
            return CompletableFuture.failedFuture(cause instanceof ConfirmingPublisher.Refusal ? new Refused(cause.getMessage()) : cause);
        });
    }

    /** The publisher, opened again on the open connection when the broker closed its channel. */
    private synchronized ConfirmingPublisher openPublisher() throws IOException {
        Connection c = connection;
        if (c == null || !c.isOpen()) {
            throw new IOException("the outbox relay is not connected to the broker");
        }
        ConfirmingPublisher p = publisher;
        if (p == null || !p.isOpen()) {
            knownExchanges.clear(); // what closed the channel may be a deleted exchange
            p = new ConfirmingPublisher(c, resources.executor(), resources.scheduler(), confirmTimeout);
            publisher = p;
        }
        return p;
    }

    /** A passive declare on a channel of its own, which the broker closes when the exchange is missing. */
    private void checkExchange(String exchange) throws IOException {
        Channel ch = connection.createChannel();
        try {
            ch.exchangeDeclarePassive(exchange);
            knownExchanges.add(exchange);
        } catch (IOException e) {
            if (e.getCause() instanceof ShutdownSignalException sig && !sig.isHardError()
                    && sig.getReason() instanceof AMQP.Channel.Close close && close.getReplyCode() == AMQP.NOT_FOUND) {
                throw new Refused("exchange '" + exchange + "' does not exist");
            }
            throw e;
        } finally {
            Connections.closeQuietly(ch);
        }
    }
}
