package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Connection;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

/**
 * The connection an incoming channel publishes on (retry copies, dead letters, delay queues), apart
 * from the one it consumes on, and its confirming publisher. The broker closes the publisher's AMQP
 * channel on a channel-level error (a dead-letter exchange that does not exist: 404), which
 * amqp-client does not recover: a new one is opened on the next publish while the connection is up.
 */
final class PublishConnection {

    private final RabbitEndpoint channel;
    private final IncomingSettings settings;
    private volatile Connection connection;
    private volatile ConfirmingPublisher publisher;

    /** @param channel the incoming channel it publishes for: its name, resources, lifecycle lock and stop */
    PublishConnection(RabbitEndpoint channel, IncomingSettings settings) {
        this.channel = channel;
        this.settings = settings;
    }

    /** Opens the connection and its publisher. Runs under the channel's lifecycle lock. */
    void open() throws IOException, TimeoutException {
        RabbitResources r = channel.resources;
        connection = r.open(channel.connection(), channel.name(), "publish");
        publisher = new ConfirmingPublisher(connection, r.executor(), r.scheduler(), settings.confirmTimeout());
    }

    /** {@return the connection, or {@code null} before it was opened} */
    Connection connection() {
        return connection;
    }

    boolean connected() {
        Connection c = connection;
        return c != null && c.isOpen();
    }

    /** {@return the publisher, opened again if the broker closed its AMQP channel while the connection is up} */
    ConfirmingPublisher publisher() {
        ConfirmingPublisher p = publisher;
        Connection c = connection;
        if (p != null && !p.isOpen() && c != null && c.isOpen()) {
            synchronized (channel.lifecycle) {
                if (publisher == p && !channel.stopping) {
                    RabbitResources r = channel.resources;
                    try {
                        publisher = new ConfirmingPublisher(c, r.executor(), r.scheduler(), settings.confirmTimeout());
                    } catch (IOException | RuntimeException e) {
                        // Stays closed: the publish fails and the delivery is requeued, nothing is lost.
                    }
                }
                p = publisher;
            }
        }
        return p;
    }

    /** Closes the publisher, then the connection. */
    void close() {
        ConfirmingPublisher p = publisher;
        if (p != null) {
            p.close();
        }
        Connections.closeQuietly(connection);
    }
}
