package dev.onceonly.api;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The dead-letter queues of the application's incoming channels of the RabbitMQ connector
 * ({@code connector=onceonly-rabbitmq}), as a CDI bean: {@code @Inject DeadLetterQueues}. Nothing
 * exposes them over HTTP unless the application mounts the resource for it
 * ({@code dev.onceonly.http.DeadLetterResource}) under its own roles.
 */
public interface DeadLetterQueues {

    /** {@return the incoming channels, sorted} */
    List<String> channels();

    /**
     * @param channel an incoming channel's name, as configured
     * @return its dead-letter queue
     * @throws IllegalArgumentException when there is no such incoming channel, naming those there are
     */
    DeadLetterQueue channel(String channel);

    /**
     * When the oldest dead letter of every channel's queue was dead-lettered: the ledger keeps every
     * row from before that (by the retention) while it waits, so that a late replay of its key is
     * still recognised.
     *
     * @return the oldest time, empty when the queues hold no {@linkplain DeadLetter#verified() verified} dead letter
     * @throws OnceOnlyException when a queue cannot be read, or cannot be read alone (another read of it is open)
     */
    Optional<Instant> oldest();
}
