package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.deadletter.DeadLetterAccess;

import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A channel's dead-letter queue on the broker, for the dead-letter operations. A scan is one AMQP
 * channel of its own (on the incoming channel's publishing connection in the application, on the
 * tool's connection in {@code bin/onceonly-dlq}): {@code basic.get} without acknowledgement holds
 * each message it returns (the broker keeps it, unacked, while the channel is open), a replay is
 * published in confirm mode with mandatory routing on the same channel, and closing the channel —
 * or losing it, or the connection, or the process — gives back every message not acknowledged
 * (RabbitMQ requeues a closed channel's unacked messages). A queue that does not exist holds no
 * dead letters. Each scan's channel is registered with {@link DeadLetterReaders}, so that the
 * purge's scan reads alone.
 *
 * <p>A replay goes to the channel's own queue through the default exchange; a
 * {@linkplain HeaderSignature verified} letter's as a signed copy naming the original exchange
 * and routing key, which the consumer believes as it believes a retry copy's. Every copy carries a
 * stamp ({@link ReplayHeaders}) naming a server-named, exclusive queue of the scan's channel, where
 * the consumer that settles the copy, on any instance, sends the guard's decision.
 */
final class DeadLetterEndpoint implements DeadLetterAccess {

    /** Opens the scan's AMQP channel. */
    @FunctionalInterface
    interface ChannelSource {
        Channel open() throws IOException, TimeoutException;
    }

    private final String channel;
    private final String queue;
    /** Where the scans register, so that the purge's reads alone. */
    private final DeadLetterReaders readers;
    /** The channel's own queue, where replays go. */
    private final String workQueue;
    private final Duration confirmTimeout;
    private final HeaderSignature letters;
    private final ReplayHeaders replays;
    private final ChannelSource channels;

    /**
     * @param channel        the channel as configured
     * @param queue          its dead-letter queue
     * @param workQueue      its queue, where replays go
     * @param confirmTimeout how long a replay waits for the broker's confirm
     * @param copies         the channel's copy signature (its key also signs the dead-letter headers)
     * @param channels       opens an AMQP channel to the channel's broker
     */
    DeadLetterEndpoint(String channel, String queue, String workQueue, Duration confirmTimeout, CopySignature copies,
                       ChannelSource channels) {
        this.channel = channel;
        this.queue = queue;
        this.readers = new DeadLetterReaders(channel, queue, channels);
        this.workQueue = workQueue;
        this.confirmTimeout = confirmTimeout;
        this.letters = HeaderSignature.deadLetters(copies);
        this.replays = new ReplayHeaders(copies);
        this.channels = channels;
    }

    /** The dead-letter queue of an incoming channel, under its configured name (without a concurrency copy's {@code $n}). */
    static DeadLetterEndpoint of(IncomingSettings s, ChannelSource channels) {
        int copy = s.channel().indexOf('$');
        return new DeadLetterEndpoint(copy < 0 ? s.channel() : s.channel().substring(0, copy), s.deadLetterQueue(),
                s.queue(),
                s.confirmTimeout(), CopySignature.of(s), channels);
    }

    /** Scans on a new AMQP channel of {@code connection}, failing while there is none. */
    static ChannelSource on(Supplier<Connection> connection) {
        return () -> {
            Connection c = connection.get();
            if (c == null || !c.isOpen()) {
                throw new IOException("not connected to the broker");
            }
            return c.createChannel();
        };
    }

    @Override
    public String channel() {
        return channel;
    }

    @Override
    public String queue() {
        return queue;
    }

    @Override
    public int count() {
        Channel ch = null;
        try {
            ch = channels.open();
            return ch.queueDeclarePassive(queue).getMessageCount();
        } catch (IOException e) {
            if (notFound(e)) {
                return 0;
            }
            throw failure("cannot count", e);
        } catch (TimeoutException | RuntimeException e) {
            throw failure("cannot count", e);
        } finally {
            if (ch != null) {
                Connections.closeQuietly(ch);
            }
        }
    }

    /** The broker closed the channel because the queue does not exist. */
    private static boolean notFound(IOException e) {
        return e.getCause() instanceof ShutdownSignalException sig && sig.getReason() instanceof AMQP.Channel.Close close
                && close.getReplyCode() == AMQP.NOT_FOUND;
    }

    @Override
    public Scan scan() {
        return opened(readers.open());
    }

    @Override
    public Scan scanAlone() {
        return opened(readers.openAlone());
    }

    private Scan opened(Channel ch) {
        try {
            ch.confirmSelect();
            return new AmqpScan(ch);
        } catch (IOException | RuntimeException e) {
            Connections.closeQuietly(ch);
            throw failure("cannot read", e);
        }
    }

    private OnceOnlyException failure(String what, Exception e) {
        return new OnceOnlyException("dead-letter queue '" + queue + "' of channel '" + channel + "': " + what + " ("
                + Connections.describe(e) + ")", e);
    }

    private final class AmqpScan implements Scan {
        private final Channel ch;
        /** Set by the return listener: the last mandatory publish was unroutable (returned before its confirm). */
        private volatile String returned;
        /** The queue does not exist (the broker closed the channel saying so): it holds nothing. */
        private boolean absent;
        /**
         * Messages still to read of those the queue held at the first read; -1 before it. Those that
         * arrive later (a replay dead-lettered again) are left to the next scan, so one never ends
         * chasing its own replays.
         */
        private long left = -1;
        /** Where the decisions on this scan's replays come back. */
        private final ReplyQueue replies;

        AmqpScan(Channel ch) {
            this.ch = ch;
            this.replies = new ReplyQueue(ch, replays, queue, channel);
            ch.addReturnListener(r -> returned = "unroutable: exchange '" + r.getExchange() + "' routed routing key '"
                    + r.getRoutingKey() + "' to no queue (" + r.getReplyText() + ")");
        }

        @Override
        public Held next() {
            if (absent || left == 0) {
                return null;
            }
            try {
                GetResponse r = ch.basicGet(queue, false);
                if (r == null) {
                    left = 0;
                    return null;
                }
                // The broker's count of the messages ready after this one.
                left = left < 0 ? r.getMessageCount() : left - 1;
                return new Message(r, parse(r));
            } catch (IOException e) {
                if (notFound(e)) {
                    absent = true;
                    return null;
                }
                throw failure("cannot read", e);
            } catch (RuntimeException e) {
                throw failure("cannot read", e);
            }
        }

        @Override
        public void republish(Held held) {
            Message m = (Message) held;
            DeadLetter l = m.letter;
            Map<String, Object> headers;
            try {
                headers = replays.copyOf(m.headers(), l, m.body(), workQueue, replies.name());
            } catch (IOException | RuntimeException e) {
                throw failure("cannot wait for the decision on the replay of " + l.id() + ", the dead letter stays", e);
            }
            AMQP.BasicProperties props = m.response.getProps().builder().headers(headers).build();
            returned = null;
            try {
                // The channel's own queue only, through the default exchange: no other queue bound
                // where the message was first published gets it again.
                ch.basicPublish("", workQueue, true, props, m.response.getBody());
                ch.waitForConfirmsOrDie(Math.max(1, confirmTimeout.toMillis()));
            } catch (IOException | TimeoutException | InterruptedException | RuntimeException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                throw failure("the replay of " + l.id() + " was not confirmed, the dead letter stays", e);
            }
            if (returned != null) {
                throw new OnceOnlyException("dead-letter queue '" + queue + "': the replay of " + l.id()
                        + " was not delivered, the dead letter stays: " + returned);
            }
        }

        @Override
        public ReplayResult decision(Duration within) {
            return replies.next(within);
        }

        @Override
        public void remove(Held held) {
            try {
                ch.basicAck(((Message) held).response.getEnvelope().getDeliveryTag(), false);
            } catch (IOException | RuntimeException e) {
                throw failure("cannot remove " + held.letter().id() + ", it stays", e);
            }
        }

        @Override
        public void close() {
            try {
                // A round trip: once the broker closed the channel, it has applied the acks sent before,
                // and given back (requeued) everything else the scan held.
                ch.close();
            } catch (IOException | TimeoutException | RuntimeException e) {
                // Closed already (by the broker, or with its connection): what it held went back then.
                Connections.closeQuietly(ch);
            }
        }
    }

    private DeadLetter parse(GetResponse r) {
        Map<String, Object> h = r.getProps().getHeaders() == null ? Map.of() : r.getProps().getHeaders();
        return DeadLetterHeaders.read(channel, h, r.getBody(), letters.verify(h, r.getBody(), workQueue));
    }

    static String sha256(byte[] body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    /** A message a scan holds: the broker's response and what an operator sees of it. */
    private record Message(GetResponse response, DeadLetter letter) implements Held {
        Map<String, Object> headers() {
            return response.getProps().getHeaders() == null ? Map.of() : response.getProps().getHeaders();
        }

        @Override
        public byte[] body() {
            return response.getBody();
        }
    }
}
