package dev.onceonly.rabbitmq;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;

/**
 * The threads the connector runs on, all made by the server's managed thread factory, so that
 * every thread that reads from the broker, dispatches a delivery or completes a confirm carries
 * the application's context (CDI, {@code java:comp} lookups, class loader). The pools belong to
 * the connector (see {@link RabbitConnector#createThreads()}).
 *
 * @param threads   amqp-client's connection, heartbeat and recovery threads
 * @param executor  consumer dispatch (one delivery at a time per AMQP channel) and confirm completions
 * @param scheduler delayed retries, confirm timeouts, reconnection attempts
 */
record RabbitResources(ThreadFactory threads, ExecutorService executor, ScheduledExecutorService scheduler) {

    /**
     * Pools of the connector's own on {@code threads}. The scheduler drops cancelled tasks at once
     * (confirm timeouts are cancelled by the thousand), rather than keeping each until its delay.
     */
    static RabbitResources create(ThreadFactory threads) {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, threads);
        scheduler.setRemoveOnCancelPolicy(true);
        return new RabbitResources(threads, Executors.newCachedThreadPool(threads), scheduler);
    }
}
