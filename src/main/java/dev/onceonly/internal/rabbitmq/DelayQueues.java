package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The delay queues of one incoming channel, where the broker holds a retry copy for a delay too long
 * to hold the delivery unacked (it would keep a prefetch slot all that time). Without plugins: queue
 * {@code <queue>.onceonly.delay.<ms>} has no consumer, {@code x-message-ttl} = the delay and
 * dead-letters, through the default exchange, to the work queue, so each copy comes back after the
 * delay. The broker adds {@code x-death} on the way; the copy's attempt count and signature are in
 * the connector's own headers, which dead-lettering leaves as they are.
 *
 * <p>Declared lazily, on the first copy for a delay, and again when the last declaration is older than
 * {@link #RENEW}: {@code x-expires} deletes a queue nobody declared for the delay plus twice that,
 * and only a declaration (not a publish) renews it, so a queue that still holds a copy is never
 * deleted under it. With {@code declare=false} the queue is only looked up (passively): an operator
 * declares it.
 *
 * <p>The type follows the work queue's: a classic work queue gets a classic delay queue (its node is
 * the work queue's node, nothing to replicate); a quorum work queue, replicated to survive a node,
 * gets a quorum delay queue with at-least-once dead-lettering ({@code x-dead-letter-strategy}, which
 * needs {@code x-overflow=reject-publish}), so a copy is only removed from the delay queue once the
 * work queue has it. So does a classic work queue that refuses messages when full ({@code
 * queue.overflow=reject-publish[-dlx]}): a classic queue dead-letters at most once, and a copy whose
 * delay ends while the work queue is full would be dropped. The broker's dead-letter worker tries a
 * refused copy again every {@code dead_letter_worker_publisher_confirm_timeout} (180 s by default).
 * A classic delay queue still loses a copy if its classic work queue is unavailable at that instant.
 */
final class DelayQueues {

    /** How long a declaration is trusted before the next copy declares the queue again, renewing its lease. */
    static final Duration RENEW = Duration.ofMinutes(5);

    private final IncomingSettings settings;
    /** The connection to declare on: the publishing one, whose channel is not the consumer's. */
    private final Supplier<Connection> connection;
    private final LongSupplier nanoClock;
    /** Per delay queue: the last declaration (or failure, so that it is not tried for every copy). */
    private final Map<String, Declared> declared = new ConcurrentHashMap<>();

    private record Declared(long at, boolean ok) {
    }

    DelayQueues(IncomingSettings settings, Supplier<Connection> connection, LongSupplier nanoClock) {
        this.settings = settings;
        this.connection = connection;
        this.nanoClock = nanoClock;
    }

    /** The arguments the delay queue for {@code delay} is declared with, in a stable order. */
    static Map<String, Object> arguments(IncomingSettings settings, Duration delay) {
        Map<String, Object> args = new LinkedHashMap<>();
        if (settings.queueType() == QueueType.QUORUM || settings.queueArguments().refusesWhenFull()) {
            args.put("x-queue-type", "quorum");
            args.put("x-dead-letter-strategy", "at-least-once");
            args.put("x-overflow", "reject-publish");
        }
        args.put("x-message-ttl", delay.toMillis());
        args.put("x-dead-letter-exchange", "");
        args.put("x-dead-letter-routing-key", settings.queue());
        args.put("x-expires", delay.plus(RENEW.multipliedBy(2)).toMillis());
        return args;
    }

    /**
     * The delay queue for {@code delay}, declared (with {@code declare=false}: found) within the last
     * {@link #RENEW}. Blocks for the declaration's round trip at most once per {@code RENEW}.
     *
     * @return its name, or empty when it could not be declared or found (logged; tried again after
     *         {@code RENEW}): the delivery is then held by the consumer instead
     */
    Optional<String> queueFor(Duration delay) {
        String name = DelayQueueNames.name(settings.queue(), delay);
        long now = nanoClock.getAsLong();
        Declared last = declared.get(name);
        if (last != null && now - last.at() < RENEW.toNanos()) {
            return last.ok() ? Optional.of(name) : Optional.empty();
        }
        try {
            declare(name, delay);
            declared.put(name, new Declared(now, true));
            return Optional.of(name);
        } catch (IOException | RuntimeException e) {
            declared.put(name, new Declared(now, false));
            LogId.ONCE0520W.log(settings.channel(), name, Connections.describe(e), Durations.format(RENEW));
            return Optional.empty();
        }
    }

    /** A copy could not be published to {@code name} (deleted meanwhile?): declared again for the next one. */
    void forget(String name) {
        declared.remove(name);
    }

    private void declare(String name, Duration delay) throws IOException {
        Connection c = connection.get();
        if (c == null || !c.isOpen()) {
            throw new IOException("the publishing connection is not open");
        }
        // A channel of its own: a refused declaration closes the channel it ran on.
        Channel ch = c.createChannel();
        try {
            if (settings.declare()) {
                ch.queueDeclare(name, true, false, false, arguments(settings, delay));
            } else {
                ch.queueDeclarePassive(name);
            }
        } finally {
            Connections.closeQuietly(ch);
        }
    }
}
