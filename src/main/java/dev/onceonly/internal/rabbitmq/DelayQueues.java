package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
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
 * {@link #RENEW} (an operator may have deleted it meanwhile). A delay queue never expires by itself:
 * with at-least-once dead-lettering (below) it can hold copies for as long as the work queue is full
 * or away, their originals acked long ago, and an {@code x-expires} would delete them with it.
 * There are few of them (one per step of the backoff above {@code retry-broker-delay-above}), and
 * {@code bin/onceonly-topology} lists and deletes them. With {@code declare=false} the queue is only
 * looked up (passively): an operator declares it.
 *
 * <p>Versions before this one declared a delay queue with {@code x-expires} of the delay plus ten
 * minutes ({@link #earlierArguments}), which a declaration cannot take away (PRECONDITION_FAILED).
 * Such a classic queue, found empty, is replaced ({@link LogId#ONCE0535I}); one still holding copies
 * is used as it is, declared again as it was (which renews its lease, as those versions did), and
 * replaced at a later declaration once empty ({@link LogId#ONCE0536W}). A quorum one is only used as
 * it is ({@link LogId#ONCE0537W}): RabbitMQ cannot delete a quorum queue only if empty; it is
 * replaced once it expired empty, or an operator deleted it. A queue of that name with any other
 * arguments is an operator's: neither deleted nor used ({@link LogId#ONCE0520W}).
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

    /** How long a declaration is trusted before the next copy declares the queue again (deleted meanwhile?). */
    static final Duration RENEW = Duration.ofMinutes(5);

    /** What earlier versions added to the delay for a delay queue's {@code x-expires}. */
    private static final Duration EARLIER_EXPIRY = Duration.ofMinutes(10);

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
        return args;
    }

    /**
     * The arguments earlier versions declared the delay queue for {@code delay} with: an expiry of the delay plus
     * ten minutes.
     */
    static Map<String, Object> earlierArguments(IncomingSettings settings, Duration delay) {
        Map<String, Object> args = arguments(settings, delay);
        args.put("x-expires", delay.plus(EARLIER_EXPIRY).toMillis());
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
        if (!settings.declare()) {
            onChannel(c, ch -> ch.queueDeclarePassive(name));
            return;
        }
        try {
            onChannel(c, ch -> ch.queueDeclare(name, true, false, false, arguments(settings, delay)));
        } catch (IOException e) {
            if (!preconditionFailed(e)) {
                throw e;
            }
            replaceEarlier(c, name, delay, e);
        }
    }

    /**
     * The queue exists with other arguments: an earlier version's (see the class) is replaced when
     * empty, else used as it is; any other is left alone.
     *
     * @param refused the declaration's refusal, thrown when the queue is not an earlier version's
     */
    private void replaceEarlier(Connection c, String name, Duration delay, IOException refused) throws IOException {
        try {
            // Its own arguments: the broker accepts them only if they are the queue's. It also renews its lease.
            onChannel(c, ch -> ch.queueDeclare(name, true, false, false, earlierArguments(settings, delay)));
        } catch (IOException e) {
            if (preconditionFailed(e)) {
                throw refused;
            }
            throw e;
        }
        if ("quorum".equals(earlierArguments(settings, delay).get("x-queue-type"))) {
            // A quorum queue refuses a delete only-if-empty with a connection error (RabbitMQ 3.x): that
            // would close the publishing connection, and a delete after a count could take a copy with it.
            LogId.ONCE0537W.log(settings.channel(), name);
            return;
        }
        // Deleted only if empty, never with a copy in it; refused when not empty, or when an instance
        // of the earlier version declared it again between the two: used as it is, replaced later.
        if (unlessRefused(c, ch -> ch.queueDelete(name, false, true))
                && unlessRefused(c, ch -> ch.queueDeclare(name, true, false, false, arguments(settings, delay)))) {
            LogId.ONCE0535I.log(settings.channel(), name);
        } else {
            LogId.ONCE0536W.log(settings.channel(), name, Durations.format(RENEW));
        }
    }

    /** @return whether the operation was done; {@code false} when the broker refused it with PRECONDITION_FAILED */
    private static boolean unlessRefused(Connection c, ChannelOperation operation) throws IOException {
        try {
            onChannel(c, operation);
            return true;
        } catch (IOException e) {
            if (!preconditionFailed(e)) {
                throw e;
            }
            return false;
        }
    }

    /** A broker operation on a channel of its own: a refused one closes the channel it ran on. */
    private static void onChannel(Connection c, ChannelOperation operation) throws IOException {
        Channel ch = c.createChannel();
        try {
            operation.run(ch);
        } finally {
            Connections.closeQuietly(ch);
        }
    }

    private interface ChannelOperation {
        void run(Channel ch) throws IOException;
    }

    /**
     * {@return whether the broker refused an operation with PRECONDITION_FAILED (406): other arguments, or a queue
     * not empty}
     */
    private static boolean preconditionFailed(IOException e) {
        return e.getCause() instanceof ShutdownSignalException sig
                && sig.getReason() instanceof AMQP.Channel.Close close
                && close.getReplyCode() == AMQP.PRECONDITION_FAILED;
    }
}
