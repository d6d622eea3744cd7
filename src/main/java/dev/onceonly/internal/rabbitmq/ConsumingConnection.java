package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.io.IOException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The connection an incoming channel consumes on, and on it the AMQP channel and
 * {@link QueueConsumer}, kept consuming: amqp-client recovers connections, but neither an AMQP
 * channel the broker closed while its connection stayed open nor a consumer whose redeclaration
 * failed in a recovery. Both are noticed here, and the consumer is started again after the recovery
 * interval, until it works or the channel stops.
 */
final class ConsumingConnection {

    private final RabbitEndpoint channel;
    private final IncomingSettings settings;
    private final CopySignature signature;
    private final Supplier<MessageTracing> tracing;
    private final Consumer<Delivery> received;
    private final Runnable countingQueue;
    private volatile Connection connection;
    private volatile QueueConsumer consumer;

    /**
     * @param channel       the incoming channel it consumes for: its name, resources, lifecycle lock and stop
     * @param received      where each delivery goes
     * @param countingQueue told when a delivery shows that the queue, configured as classic, counts requeues
     */
    ConsumingConnection(RabbitEndpoint channel, IncomingSettings settings, CopySignature signature,
                        Supplier<MessageTracing> tracing, Consumer<Delivery> received, Runnable countingQueue) {
        this.channel = channel;
        this.settings = settings;
        this.signature = signature;
        this.tracing = tracing;
        this.received = received;
        this.countingQueue = countingQueue;
    }

    /** Opens the connection, not consuming yet. Runs under the channel's lifecycle lock. */
    void open() throws IOException, TimeoutException {
        connection = channel.resources.open(channel.connection(), channel.name(), "consume", this::recovered);
    }

    /** Whether the connection is open and the consumer registered with the broker. */
    boolean consuming() {
        Connection c = connection;
        QueueConsumer q = consumer;
        return c != null && c.isOpen() && q != null && q.isConsuming();
    }

    /**
     * Opens the consuming AMQP channel: topology, prefetch, consumer. One AMQP channel, hence one
     * delivery at a time: parallelism comes from Reactive Messaging's "concurrency" attribute, which
     * makes copies of the incoming channel (and so of this object). Runs under the channel's
     * lifecycle lock.
     */
    void consume() throws IOException {
        Channel ch = connection.createChannel();
        try {
            if (settings.declare()) {
                ch = Topology.declare(connection, ch, settings);
            }
            ch.basicQos(settings.prefetch());
            QueueConsumer c = new QueueConsumer(ch, settings, signature, tracing, received, this::lost, countingQueue);
            ch.basicConsume(settings.queue(), false, "onceonly:" + channel.name(), c);
            consumer = c;
        } catch (IOException | RuntimeException e) {
            Connections.closeQuietly(ch);
            throw e;
        }
    }

    /** Cancels the consumer: the broker sends nothing more. Runs under the channel's lifecycle lock, as it stops. */
    void cancel() {
        QueueConsumer c = consumer;
        try {
            if (c != null && c.getConsumerTag() != null && c.getChannel().isOpen()) {
                c.getChannel().basicCancel(c.getConsumerTag());
            }
        } catch (IOException | RuntimeException e) {
            // The channel is closing anyway; its unacked deliveries go back to the queue.
        }
    }

    void close() {
        Connections.closeQuietly(connection);
    }

    /**
     * The broker closed the consuming AMQP channel while its connection stayed open (a 406 such as an
     * ack timeout, a failed declaration) or cancelled the consumer (queue deleted). amqp-client
     * recovers connections, not such channels: without this the channel would never consume again.
     */
    private void lost(String why) {
        if (channel.stopping) {
            return;
        }
        LogId.ONCE0512W.log(channel.name(), why, Durations.format(channel.connection().recoveryInterval()));
        scheduleReconsume();
    }

    /**
     * amqp-client recovered the consuming connection. Its topology recovery redeclares the queues
     * and then the consumer on the recovered AMQP channel; when a declaration fails there (a
     * queue whose node is down in a cluster: 404), the broker closes that channel and the consumer
     * is never recovered, with no shutdown signal to this consumer. Before, the channel then never
     * consumed again. Checked after the recovery interval, when a recovered consumer has had its
     * consume-ok.
     */
    private void recovered() {
        try {
            channel.resources.scheduler().schedule(() -> {
                QueueConsumer c = consumer;
                if (!channel.stopping && (c == null || !c.isConsuming())) {
                    LogId.ONCE0512W.log(channel.name(), "the consumer was not recovered with its connection",
                            Durations.format(channel.connection().recoveryInterval()));
                    scheduleReconsume();
                }
            }, channel.connection().recoveryInterval().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // Shutting down.
        }
    }

    private void scheduleReconsume() {
        try {
            channel.resources.scheduler().schedule(this::reconsume, channel.connection().recoveryInterval().toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // Shutting down.
        }
    }

    private void reconsume() {
        synchronized (channel.lifecycle) {
            if (channel.stopping || consumer != null && consumer.isConsuming()) {
                return;
            }
            Connection c = connection;
            if (c == null || !c.isOpen()) {
                scheduleReconsume(); // the connection is recovering; try again after it
                return;
            }
            try {
                consume();
                LogId.ONCE0513I.log(channel.name(), settings.queue());
            } catch (IOException | RuntimeException e) {
                LogId.ONCE0512W.log(channel.name(), Connections.describe(e), Durations.format(channel.connection().recoveryInterval()));
                scheduleReconsume();
            }
        }
    }
}
