package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes on one AMQP channel in confirm mode: the future of a publish completes only once the
 * broker confirmed it, and fails when the broker nacks it, returns it as unroutable (mandatory
 * publishes), the channel closes before the confirm, or no confirm comes within the timeout.
 *
 * <p>Futures complete on the given executor, never on amqp-client's connection thread: what runs
 * after a confirm (acking another delivery, the application's own continuation) must not hold up
 * the thread that reads every frame of the connection.
 *
 * <p>Thread-safe: publishes are serialised, because a publish and its sequence number must be taken
 * together.
 */
final class ConfirmingPublisher {

    /** Header of mandatory publishes: matches a returned message to its publish. */
    static final String SEQUENCE_HEADER = "x-onceonly-publish-seq";

    private final Channel channel;
    private final Executor completions;
    private final ScheduledExecutorService scheduler;
    private final Duration timeout;
    /**
     * Publishes awaiting their confirm, by sequence number. Sequence numbers restart when amqp-client
     * recovers the channel, so whatever removes an entry for one publish (its timeout, a return)
     * removes that very entry and never a later publish's that reuses the number.
     */
    private final ConcurrentNavigableMap<Long, Pending> pending = new ConcurrentSkipListMap<>();
    private final Object publishLock = new Object();

    ConfirmingPublisher(Connection connection, Executor completions, ScheduledExecutorService scheduler,
                        Duration timeout) throws IOException {
        this.completions = completions;
        this.scheduler = scheduler;
        this.timeout = timeout;
        this.channel = connection.createChannel();
        channel.confirmSelect();
        channel.addConfirmListener((seq, multiple) -> settle(seq, multiple, null),
                (seq, multiple) -> settle(seq, multiple, new Refusal("the broker refused (nacked) the message")));
        channel.addReturnListener(r -> {
            Object seq = r.getProperties().getHeaders() == null ? null : r.getProperties().getHeaders().get(SEQUENCE_HEADER);
            if (seq instanceof Number n) {
                fail(pending.remove(n.longValue()), new Refusal("unroutable: exchange '" + r.getExchange()
                        + "' routed routing key '" + r.getRoutingKey() + "' to no queue (" + r.getReplyText() + ")"));
            }
        });
        // Sequence numbers restart on a recovered channel: whatever was unconfirmed is lost with the old one.
        channel.addShutdownListener(this::failAll);
    }

    /**
     * Publishes and returns a future completed by the broker's confirm.
     *
     * @param mandatory whether an unroutable message fails the publish (rather than being dropped)
     */
    CompletableFuture<Void> publish(String exchange, String routingKey, boolean mandatory,
                                    AMQP.BasicProperties properties, byte[] body) {
        Pending entry = new Pending(new CompletableFuture<>());
        synchronized (publishLock) {
            long seq = channel.getNextPublishSeqNo();
            AMQP.BasicProperties props = mandatory ? withHeader(properties, SEQUENCE_HEADER, seq) : properties;
            // The timeout is set before the publish: a confirm that comes at once must find it to cancel.
            try {
                entry.timeout = scheduler.schedule(() -> {
                    if (pending.remove(seq, entry)) {
                        fail(entry, new TimeoutException("no publisher confirm within " + timeout.toMillis() + " ms"));
                    }
                }, timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                // The connector stops: a failed publish like any other, so the caller's completion runs.
                entry.confirmed.completeExceptionally(stopping);
                return entry.confirmed;
            }
            pending.put(seq, entry);
            try {
                channel.basicPublish(exchange, routingKey, mandatory, props, body);
            } catch (IOException | RuntimeException e) {
                // AlreadyClosedException (a RuntimeException) while the connection is down.
                pending.remove(seq, entry);
                entry.complete(e);
            }
        }
        return entry.confirmed;
    }

    boolean isOpen() {
        return channel.isOpen();
    }

    void close() {
        try {
            if (channel.isOpen()) {
                channel.close();
            }
        } catch (IOException | TimeoutException | RuntimeException e) {
            // Closing is best effort: the connection closes right after.
        }
    }

    private void settle(long seq, boolean multiple, Exception failure) {
        Map<Long, Pending> done;
        if (multiple) {
            ConcurrentNavigableMap<Long, Pending> head = pending.headMap(seq, true);
            done = new HashMap<>(head);
            done.forEach(head::remove);
        } else {
            Pending p = pending.remove(seq);
            done = p == null ? Map.of() : Map.of(seq, p);
        }
        if (!done.isEmpty()) {
            completions.execute(() -> done.values().forEach(p -> p.complete(failure)));
        }
    }

    private void failAll(ShutdownSignalException cause) {
        Map<Long, Pending> lost = new HashMap<>(pending);
        lost.forEach(pending::remove);
        if (!lost.isEmpty()) {
            IOException failure = new IOException("channel closed before the broker confirmed the message: " + cause.getMessage());
            completions.execute(() -> lost.values().forEach(p -> p.complete(failure)));
        }
    }

    private void fail(Pending p, Exception failure) {
        if (p != null) {
            completions.execute(() -> p.complete(failure));
        }
    }

    /**
     * The broker's verdict on one message (a nack, or a mandatory message returned as unroutable),
     * as opposed to a failure of the connection or a confirm that did not come in time.
     */
    static final class Refusal extends IOException {
        Refusal(String message) {
            super(message);
        }
    }

    /** One publish awaiting its confirm, and its timeout, cancelled once the confirm came. */
    private static final class Pending {
        final CompletableFuture<Void> confirmed;
        /** Set before the publish, so every completion finds it. */
        volatile ScheduledFuture<?> timeout;

        Pending(CompletableFuture<Void> confirmed) {
            this.confirmed = confirmed;
        }

        void complete(Exception failure) {
            timeout.cancel(false); // else each publish's timeout task stayed queued for the whole timeout
            if (failure == null) {
                confirmed.complete(null);
            } else {
                confirmed.completeExceptionally(failure);
            }
        }
    }

    /** A copy of {@code props} with one header added. */
    private static AMQP.BasicProperties withHeader(AMQP.BasicProperties props, String name, Object value) {
        Map<String, Object> headers = props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
        headers.put(name, value);
        return props.builder().headers(headers).build();
    }
}
