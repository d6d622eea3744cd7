package dev.onceonly.rabbitmq;

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
    private final ConcurrentNavigableMap<Long, CompletableFuture<Void>> pending = new ConcurrentSkipListMap<>();
    private final Object publishLock = new Object();

    ConfirmingPublisher(Connection connection, Executor completions, ScheduledExecutorService scheduler,
                        Duration timeout) throws IOException {
        this.completions = completions;
        this.scheduler = scheduler;
        this.timeout = timeout;
        this.channel = connection.createChannel();
        channel.confirmSelect();
        channel.addConfirmListener((seq, multiple) -> settle(seq, multiple, null),
                (seq, multiple) -> settle(seq, multiple, new IOException("the broker refused (nacked) the message")));
        channel.addReturnListener(r -> {
            Object seq = r.getProperties().getHeaders() == null ? null : r.getProperties().getHeaders().get(SEQUENCE_HEADER);
            if (seq instanceof Number n) {
                fail(pending.remove(n.longValue()), new IOException("unroutable: exchange '" + r.getExchange()
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
        CompletableFuture<Void> confirmed = new CompletableFuture<>();
        long seq;
        synchronized (publishLock) {
            seq = channel.getNextPublishSeqNo();
            AMQP.BasicProperties props = mandatory ? withHeader(properties, SEQUENCE_HEADER, seq) : properties;
            pending.put(seq, confirmed);
            try {
                channel.basicPublish(exchange, routingKey, mandatory, props, body);
            } catch (IOException | RuntimeException e) {
                // AlreadyClosedException (a RuntimeException) while the connection is down.
                pending.remove(seq);
                confirmed.completeExceptionally(e);
                return confirmed;
            }
        }
        scheduler.schedule(() -> fail(pending.remove(seq), new TimeoutException(
                "no publisher confirm within " + timeout.toMillis() + " ms")), timeout.toMillis(), TimeUnit.MILLISECONDS);
        return confirmed;
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
        Map<Long, CompletableFuture<Void>> done;
        if (multiple) {
            ConcurrentNavigableMap<Long, CompletableFuture<Void>> head = pending.headMap(seq, true);
            done = new HashMap<>(head);
            head.clear();
        } else {
            CompletableFuture<Void> f = pending.remove(seq);
            done = f == null ? Map.of() : Map.of(seq, f);
        }
        if (!done.isEmpty()) {
            completions.execute(() -> done.values().forEach(f -> complete(f, failure)));
        }
    }

    private void failAll(ShutdownSignalException cause) {
        Map<Long, CompletableFuture<Void>> lost = new HashMap<>(pending);
        lost.keySet().forEach(pending::remove);
        if (!lost.isEmpty()) {
            IOException failure = new IOException("channel closed before the broker confirmed the message: " + cause.getMessage());
            completions.execute(() -> lost.values().forEach(f -> f.completeExceptionally(failure)));
        }
    }

    private void fail(CompletableFuture<Void> f, Exception failure) {
        if (f != null) {
            completions.execute(() -> f.completeExceptionally(failure));
        }
    }

    private static void complete(CompletableFuture<Void> f, Exception failure) {
        if (failure == null) {
            f.complete(null);
        } else {
            f.completeExceptionally(failure);
        }
    }

    /** A copy of {@code props} with one header added. */
    private static AMQP.BasicProperties withHeader(AMQP.BasicProperties props, String name, Object value) {
        Map<String, Object> headers = props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
        headers.put(name, value);
        return props.builder().headers(headers).build();
    }
}
