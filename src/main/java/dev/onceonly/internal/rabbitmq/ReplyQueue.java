package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.support.LogId;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Where the guard's decisions on one dead-letter scan's replays come back: a server-named,
 * exclusive, auto-deleted queue of the scan's own AMQP channel, declared at its first replay and gone
 * with the channel. A decision the connector did not sign ({@link ReplayHeaders}) is ignored, so one
 * who saw a copy's reply queue cannot make a replay remove its letter early.
 */
final class ReplyQueue {

    private final Channel ch;
    private final ReplayHeaders replays;
    private final String deadLetterQueue;
    private final String channel;
    /** The headers of the messages received, in order. */
    private final BlockingQueue<Map<String, Object>> received = new LinkedBlockingQueue<>();
    private String name;

    ReplyQueue(Channel ch, ReplayHeaders replays, String deadLetterQueue, String channel) {
        this.ch = ch;
        this.replays = replays;
        this.deadLetterQueue = deadLetterQueue;
        this.channel = channel;
    }

    /** {@return the queue's name, declared and consumed on the first call} */
    String name() throws IOException {
        if (name == null) {
            String q = ch.queueDeclare().getQueue();
            ch.basicConsume(q, true, new DefaultConsumer(ch) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties props, byte[] body) {
                    received.add(props.getHeaders() == null ? Map.of() : props.getHeaders());
                }
            });
            name = q;
        }
        return name;
    }

    /**
     * @param within the longest wait
     * @return the next decision signed by this connector, or {@code null} when none came in time (or
     * no replay was published)
     */
    ReplayResult next(Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        try {
            for (long left = within.toNanos(); name != null && left > 0; left = deadline - System.nanoTime()) {
                Map<String, Object> h = received.poll(left, TimeUnit.NANOSECONDS);
                if (h == null) {
                    return null;
                }
                var decided = replays.decisionOf(h, name);
                if (decided.isPresent()) {
                    return decided.get();
                }
                LogId.ONCE0807W.log(deadLetterQueue, channel);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }
}
