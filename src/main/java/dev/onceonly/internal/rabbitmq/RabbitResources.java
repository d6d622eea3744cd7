package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Connection;

import java.io.IOException;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * What the connector runs on: threads all made by the server's managed thread factory, so that
 * every thread that reads from the broker, dispatches a delivery or completes a confirm carries
 * the application's context (CDI, {@code java:comp} lookups, class loader), and the sources of time,
 * chance and connections. The pools belong to the connector, which makes them when it is created.
 * A deterministic simulation passes its own of each (virtual time, a seeded random source, a
 * simulated broker): nothing on the connector's path reads a clock or a random source of its own.
 *
 * @param threads   amqp-client's connection, heartbeat and recovery threads
 * @param executor  consumer dispatch (one delivery at a time per AMQP channel) and confirm completions
 * @param scheduler delayed retries, confirm timeouts, reconnection attempts
 * @param opener    opens the broker connections ({@link Connections#open})
 * @param nanoClock the time delays are measured on ({@link System#nanoTime()})
 * @param jitter    the random fraction in [0, 1) a retry backoff is spread by
 * @param clock     the wall time a dead letter is stamped with ({@link dev.onceonly.rabbitmq.RabbitHeaders#DEAD_LETTERED_AT})
 */
record RabbitResources(ThreadFactory threads, ExecutorService executor, ScheduledExecutorService scheduler,
                       Opener opener, LongSupplier nanoClock, DoubleSupplier jitter, Clock clock) {

    /**
     * Pools of the connector's own on {@code threads}, real connections, the system clock. The
     * scheduler drops cancelled tasks at once (confirm timeouts are cancelled by the thousand),
     * rather than keeping each until its delay.
     */
    static RabbitResources create(ThreadFactory threads) {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, threads);
        scheduler.setRemoveOnCancelPolicy(true);
        return new RabbitResources(threads, Executors.newCachedThreadPool(threads), scheduler,
                (s, channel, role, r, recovered) -> Connections.open(s, channel, role, r.threads(), r.executor(), recovered),
                System::nanoTime, () -> ThreadLocalRandom.current().nextDouble(), Clock.systemUTC());
    }

    /** Opens one connection of a channel; see {@link Connections#open}. */
    @FunctionalInterface
    interface Opener {
        Connection open(ConnectionSettings settings, String channel, String role, RabbitResources resources, Runnable recovered)
                throws IOException, TimeoutException;
    }

    /** {@link Opener#open} with nothing to tell on recovery. */
    Connection open(ConnectionSettings settings, String channel, String role) throws IOException, TimeoutException {
        return opener.open(settings, channel, role, this, () -> { });
    }

    /** {@link Opener#open}, telling {@code recovered} each time amqp-client recovered the connection. */
    Connection open(ConnectionSettings settings, String channel, String role, Runnable recovered)
            throws IOException, TimeoutException {
        return opener.open(settings, channel, role, this, recovered);
    }
}
