package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.internal.deadletter.DeadLetterAccess;
import dev.onceonly.rabbitmq.RabbitHeaders;

import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
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
 * dead letters.
 *
 * <p>A replay goes to the channel's own queue through the default exchange; a
 * {@linkplain DeadLetterSignature verified} letter's as a signed copy naming the original exchange
 * and routing key, which the consumer believes as it believes a retry copy's.
 */
final class DeadLetterEndpoint implements DeadLetterAccess {

    /** Opens the scan's AMQP channel. */
    @FunctionalInterface
    interface ChannelSource {
        Channel open() throws IOException, TimeoutException;
    }

    /**
     * The connector's dead-letter and copy headers: replaced on a replay, which is a delivery like the
     * first (a verified one gets a copy's headers of its own, an unverified one none).
     */
    private static final String[] DEAD_LETTER_HEADERS = {RabbitHeaders.OUTCOME, RabbitHeaders.REASON, RabbitHeaders.CONSUMER,
            RabbitHeaders.CHANNEL, RabbitHeaders.QUEUE, RabbitHeaders.ATTEMPTS, RabbitHeaders.ORIGINAL_EXCHANGE,
            RabbitHeaders.ORIGINAL_ROUTING_KEY, RabbitHeaders.DEAD_LETTER_ID, RabbitHeaders.DEAD_LETTERED_AT,
            RabbitHeaders.KEY_DIGEST, RabbitHeaders.DELIVERY_COUNT, RabbitHeaders.DEAD_LETTER_SIGNATURE,
            RabbitHeaders.RETRY_ATTEMPTS, RabbitHeaders.SIGNATURE, ConfirmingPublisher.SEQUENCE_HEADER};

    /**
     * The readers' queue lives while it is used, and some time after: a queue of its own, holding no
     * message, whose consumers are the scans open on the dead-letter queue.
     */
    private static final long READERS_EXPIRE_MS = Duration.ofHours(1).toMillis();
    /** How often, and how far apart, a scan tries to register while the purge reads alone: about ten seconds. */
    private static final int REGISTRATION_ATTEMPTS = 50;
    private static final Duration REGISTRATION_PAUSE = Duration.ofMillis(200);

    private final String channel;
    private final String queue;
    /** Where the scans of {@link #queue} register: {@code <dead-letter queue>.readers}. */
    private final String readers;
    /** The channel's own queue, where replays go. */
    private final String workQueue;
    private final Duration confirmTimeout;
    /** Signs a verified letter's replay as the connector's copy, so that it keys as the original. */
    private final CopySignature copies;
    private final DeadLetterSignature letters;
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
        this.readers = readersOf(queue);
        this.workQueue = workQueue;
        this.confirmTimeout = confirmTimeout;
        this.copies = copies;
        this.letters = new DeadLetterSignature(copies);
        this.channels = channels;
    }

    /** The dead-letter queue of an incoming channel, under its configured name (without a concurrency copy's {@code $n}). */
    static DeadLetterEndpoint of(IncomingSettings s, ChannelSource channels) {
        int copy = s.channel().indexOf('$');
        return new DeadLetterEndpoint(copy < 0 ? s.channel() : s.channel().substring(0, copy), s.deadLetterQueue(), s.queue(),
                s.confirmTimeout(), CopySignature.of(s), channels);
    }

    /** {@return where the scans of the dead-letter queue {@code queue} register} */
    static String readersOf(String queue) {
        return queue + ".readers";
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
        // A read that finds the purge reading alone waits for it (it reads each letter once, then ends).
        for (int attempt = 1; ; attempt++) {
            try {
                return open(false);
            } catch (ReadersBusy busy) {
                if (attempt == REGISTRATION_ATTEMPTS) {
                    throw busy("another read of the queue runs alone (the ledger purge's); try again", busy);
                }
                pause();
            }
        }
    }

    @Override
    public Scan scanAlone() {
        try {
            return open(true);
        } catch (ReadersBusy busy) {
            throw busy("another read of the queue is open and may hold dead letters", busy);
        }
    }

    /**
     * Opens a scan's channel registered as a reader of the queue: a consumer on the queue's
     * {@linkplain #readers readers' queue}, exclusive for a scan alone. The broker refuses an
     * exclusive consumer beside any other, and any consumer beside an exclusive one; and it ends
     * the registration with the channel, when it also gives back what the scan held. So a scan
     * alone runs only while no other scan holds a dead letter, and the purge's pin sees every one.
     */
    private Scan open(boolean alone) throws ReadersBusy {
        Channel ch = null;
        try {
            ch = channels.open();
            ch.queueDeclare(readers, false, false, false, Map.of("x-expires", READERS_EXPIRE_MS));
            try {
                ch.basicConsume(readers, true, "", false, alone, Map.of(), new DefaultConsumer(ch));
            } catch (IOException e) {
                if (refused(e)) {
                    throw new ReadersBusy(e);
                }
                throw e;
            }
            ch.confirmSelect();
            return new AmqpScan(ch);
        } catch (IOException | TimeoutException | RuntimeException e) {
            if (ch != null) {
                Connections.closeQuietly(ch);
            }
            if (e instanceof ReadersBusy busy) {
                throw busy;
            }
            throw failure("cannot read", e);
        }
    }

    /** The broker refused the reader's registration: a scan alone runs, or (for one) another scan is open. */
    private static boolean refused(IOException e) {
        return e.getCause() instanceof ShutdownSignalException sig && sig.getReason() instanceof AMQP.Channel.Close close
                && close.getReplyCode() == AMQP.ACCESS_REFUSED;
    }

    /** Another scan's registration stood in the way of this one's. */
    private static final class ReadersBusy extends RuntimeException {
        ReadersBusy(IOException cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    private static void pause() {
        try {
            Thread.sleep(REGISTRATION_PAUSE.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OnceOnlyException("interrupted while waiting to read the dead-letter queue", e);
        }
    }

    private OnceOnlyException busy(String what, ReadersBusy e) {
        return new OnceOnlyException("dead-letter queue '" + queue + "' of channel '" + channel + "': " + what, e);
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

        AmqpScan(Channel ch) {
            this.ch = ch;
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
            Map<String, Object> headers = new HashMap<>(m.headers());
            for (String h : DEAD_LETTER_HEADERS) {
                headers.remove(h);
            }
            headers.keySet().removeIf(n -> n.equals("x-death") || n.startsWith("x-first-death-") || n.startsWith("x-last-death-"));
            headers.put(RabbitHeaders.REPLAY_OF, l.id());
            headers.put(RabbitHeaders.REPLAYS, l.replays() + 1);
            if (l.verified()) {
                // A copy of the connector's, as a retry copy is, at its first attempt: the consumer
                // believes its exchange and routing key, so the guard derives the original's key.
                headers.put(RabbitHeaders.RETRY_ATTEMPTS, 0);
                headers.put(RabbitHeaders.ORIGINAL_EXCHANGE, l.exchange());
                headers.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, l.routingKey());
                headers.put(RabbitHeaders.SIGNATURE, copies.sign(workQueue, 0, l.exchange(), l.routingKey(), m.body()));
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
        byte[] body = r.getBody();
        String sha = sha256(body);
        String id = text(h, RabbitHeaders.DEAD_LETTER_ID);
        Long at = number(h, RabbitHeaders.DEAD_LETTERED_AT);
        return new DeadLetter(id.isEmpty() ? "sha256:" + sha.substring(0, 16) : id, channel, text(h, RabbitHeaders.OUTCOME),
                text(h, RabbitHeaders.REASON), intOf(number(h, RabbitHeaders.ATTEMPTS)), text(h, RabbitHeaders.CONSUMER),
                at == null ? null : Instant.ofEpochMilli(at), text(h, RabbitHeaders.KEY_DIGEST), sha, body.length,
                intOf(number(h, RabbitHeaders.REPLAYS)), nullable(h, RabbitHeaders.ORIGINAL_EXCHANGE),
                nullable(h, RabbitHeaders.ORIGINAL_ROUTING_KEY), letters.verify(h, body, workQueue));
    }

    private static String text(Map<String, Object> h, String name) {
        String v = nullable(h, name);
        return v == null ? "" : v;
    }

    /** Header strings arrive as amqp-client's {@code LongString} (or bytes): their text. */
    private static String nullable(Map<String, Object> h, String name) {
        Object v = h.get(name);
        return v == null ? null : v instanceof byte[] b ? new String(b, java.nio.charset.StandardCharsets.UTF_8) : v.toString();
    }

    private static Long number(Map<String, Object> h, String name) {
        Object v = h.get(name);
        if (v instanceof Number n) {
            return n.longValue();
        }
        try {
            return v == null ? null : Long.parseLong(v.toString());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static int intOf(Long v) {
        return v == null ? 0 : (int) Math.max(0, Math.min(Integer.MAX_VALUE, v));
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
