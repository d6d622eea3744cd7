package dev.onceonly.internal.jms;

import jakarta.jms.ConnectionFactory;
import jakarta.jms.Queue;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * The real {@link JmsRefusals} for {@code dev.onceonly.simulation}, holding BUSY and RETRY deliveries
 * on the simulation's clock instead of sleeping the (only) thread. Only construction crosses the
 * package line.
 */
public final class SimJmsRefusals {

    private SimJmsRefusals() {
    }

    /**
     * As {@link JmsRefusals#JmsRefusals(Duration, ConnectionFactory, Queue, JmsRefusals.ListenerTransaction)};
     * {@code hold} waits the retry delay.
     */
    public static JmsRefusals create(Duration retryDelay, ConnectionFactory factory, Queue deadLetterQueue,
                                     JmsRefusals.ListenerTransaction transaction, Consumer<Duration> hold) {
        return new JmsRefusals(retryDelay, factory, deadLetterQueue, transaction, hold::accept);
    }
}
