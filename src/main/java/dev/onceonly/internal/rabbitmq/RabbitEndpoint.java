package dev.onceonly.internal.rabbitmq;

import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * What incoming and outgoing channels share: connecting asynchronously and retrying until the
 * broker is there (amqp-client's automatic recovery covers only connections that were once up),
 * and bounded waiting on shutdown.
 */
abstract class RabbitEndpoint {

    private static final long POLL_MS = 20;

    private final String name;
    private final ConnectionSettings connection;
    final RabbitResources resources;
    /** Guards connecting against stopping. */
    final Object lifecycle = new Object();
    volatile boolean stopping;

    RabbitEndpoint(String name, ConnectionSettings connection, RabbitResources resources) {
        this.name = name;
        this.connection = connection;
        this.resources = resources;
    }

    String name() {
        return name;
    }

    ConnectionSettings connection() {
        return connection;
    }

    /** Connects in the background: connecting on the thread that starts the application can deadlock Liberty's start. */
    final void start() {
        resources.executor().execute(this::connect);
    }

    private void connect() {
        synchronized (lifecycle) {
            if (stopping) {
                return;
            }
            try {
                open();
            } catch (IOException | TimeoutException | RuntimeException e) {
                LogId.ONCE0502W.log(name, connection.describe(), e.getClass().getSimpleName() + ": " + e.getMessage(),
                        Durations.format(connection.recoveryInterval()));
                close();
                resources.scheduler().schedule(this::start, connection.recoveryInterval().toMillis(), TimeUnit.MILLISECONDS);
                return;
            }
        }
        opened();
    }

    /** Whether every connection of this channel is open now (readiness); false while connecting or recovering. */
    abstract boolean connected();

    /** Opens connections, declares topology, starts consuming. Runs under {@link #lifecycle}. */
    abstract void open() throws IOException, TimeoutException;

    /** Called after a successful {@link #open()}, outside the lock. */
    void opened() {
    }

    /** Closes whatever {@link #open()} opened, also after it failed halfway. Runs under {@link #lifecycle}. */
    abstract void close();

    /** Waits until {@code done} holds or {@code timeout} passed. */
    static void awaitQuietly(BooleanSupplier done, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
