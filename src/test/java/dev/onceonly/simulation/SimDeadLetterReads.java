package dev.onceonly.simulation;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.impl.AMQImpl;
import dev.onceonly.rabbitmq.RabbitHeaders;

import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * The broker's side of the dead-letter reads (the connector's {@code DeadLetterEndpoint} and
 * {@code DeadLetterReaders}), on channels that wrap {@link SimAmqp}'s: {@code basic.get} without
 * acknowledgement, held until acked or the channel closes (then requeued); a replay's publish in
 * confirm mode ({@code waitForConfirmsOrDie}), its confirm sometimes nacked or lost after the broker
 * stored the copy; the readers' queues' consumers, an exclusive one refused beside any other and any
 * beside an exclusive one ({@code 403 ACCESS_REFUSED}, the channel closed); passive declarations
 * with the broker's counts. Every other call goes to the wrapped channel.
 *
 * <p>A read that registered alone (the purge's) takes no virtual time, so no other read starts while
 * it is open: a read that found one would wait on the real clock ({@code DeadLetterReaders}).
 */
final class SimDeadLetterReads {

    /** A confirm of a replay nacked (the copy not stored), or lost after the broker stored it. */
    private static final double CONFIRM_NACK = 0.03;
    private static final double CONFIRM_LOST = 0.03;

    private final World w;
    /** The consumers of each readers' queue: channel → exclusive. */
    private final Map<String, Map<Reads, Boolean>> registered = new LinkedHashMap<>();
    private final List<Reads> open = new ArrayList<>();
    /** Dead letters acked without a replay of them confirmed on the same channel, by logical id: only discards may. */
    final Map<String, Integer> removedUnreplayed = new LinkedHashMap<>();
    /** The logical message of each dead letter read, by the letter's id as operators see it. */
    private final Map<String, String> letters = new LinkedHashMap<>();
    /** Replays published, stored by the broker: by the dead letter's logical id. */
    final Map<String, Integer> replaysStored = new LinkedHashMap<>();

    SimDeadLetterReads(World w) {
        this.w = w;
    }

    /** A connection of {@code exec}'s instance to the broker whose channels also read dead letters. */
    Connection connect(SimExecutor exec, String name) {
        Connection inner = w.amqp.connect(exec, name);
        Class<?>[] type = {Connection.class};
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), type, (p, m, a) -> {
            Object r = forward(inner, m, a);
            return m.getName().equals("createChannel") ? new Reads(exec.owner, (Channel) r).proxy : r;
        });
    }

    /** {@return the logical message of the dead letter {@code letterId} read} */
    String logicalIdOf(String letterId) {
        return letters.getOrDefault(letterId, "?" + letterId);
    }

    /** The instance died: its reads' channels close, and what they held goes back to the queue. */
    void crashed(SimLoop.Owner owner) {
        for (Reads r : new ArrayList<>(open)) {
            if (r.owner == owner) {
                r.closeQuietly();
            }
        }
    }

    /** {@return the reads still open} every one of them closed once the world is at rest */
    int openReads() {
        return open.size();
    }

    private static Object forward(Object target, Method m, Object[] a) throws Throwable {
        try {
            return m.invoke(target, a);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static String sha256(byte[] body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private record Held(SimBroker.Queue queue, SimBroker.Message message) {
    }

    /** The names of replays' reply queues, which this broker does not hold: a decision sent there is dropped. */
    static final String REPLY_QUEUE = "amq.gen-reply-";
    private int replyQueues;

    /** One AMQP channel of an instance, wrapped. */
    private final class Reads implements InvocationHandler {
        final SimLoop.Owner owner;
        final Channel inner;
        final Channel proxy;
        private final Map<Long, Held> held = new LinkedHashMap<>();
        /** The bodies of the replays this channel published and the broker confirmed. */
        private final Set<byte[]> replayed = Collections.newSetFromMap(new IdentityHashMap<>());
        private Exception unconfirmed;
        private long nextTag = 1;
        private boolean alone;
        private boolean reading;
        private boolean closed;

        Reads(SimLoop.Owner owner, Channel inner) {
            this.owner = owner;
            this.inner = inner;
            Class<?>[] type = {Channel.class};
            this.proxy = (Channel) Proxy.newProxyInstance(getClass().getClassLoader(), type, this);
        }

        /** A read of a dead-letter queue starts with its registration, or its first {@code basic.get}. */
        private boolean reads(Method m, Object[] a) {
            boolean starts = m.getName().equals("basicGet")
                    || m.getName().startsWith("queueDeclare") && readers((String) a[0]);
            if (!reading && !closed && starts) {
                reading = true;
                open.add(this);
            }
            return reading;
        }

        @Override
        public Object invoke(Object p, Method m, Object[] a) throws Throwable {
            if (m.getName().equals("queueDeclare") && (a == null || a.length == 0)) {
                // A replay's reply queue, server-named. The operators here never wait for a decision
                // (their wait is 0: a wait would block the run's one thread), so none is delivered
                // to it and the letter stays until a later replay or a discard.
                return new AMQImpl.Queue.DeclareOk(REPLY_QUEUE + (++replyQueues), 0, 0);
            }
            if (m.getName().equals("basicConsume") && ((String) a[0]).startsWith(REPLY_QUEUE)) {
                return "reply-consumer";
            }
            boolean counted = m.getName().equals("queueDeclarePassive")
                    && (readers((String) a[0]) || ((String) a[0]).endsWith(".dlq"));
            if (counted) {
                return passive((String) a[0]);
            }
            if (!reads(m, a)) {
                return forward(inner, m, a);
            }
            switch (m.getName()) {
                case "close", "abort" -> {
                    closeQuietly();
                    return null;
                }
                case "isOpen" -> {
                    return !closed && inner.isOpen();
                }
                case "basicGet" -> {
                    return get((String) a[0]);
                }
                case "basicAck" -> {
                    ack((Long) a[0]);
                    return null;
                }
                case "queueDeclare" -> {
                    String queue = (String) a[0];
                    return readers(queue) ? new AMQImpl.Queue.DeclareOk(queue, 0, consumers(queue))
                            : forward(inner, m, a);
                }
                case "basicConsume" -> {
                    if (a.length == 7 && readers((String) a[0])) {
                        return register((String) a[0], (Boolean) a[4]);
                    }
                    return forward(inner, m, a);
                }
                case "confirmSelect", "addReturnListener" -> {
                    return null; // a replay to the channel's own queue is always routable
                }
                case "basicPublish" -> {
                    publish((String) a[0], (String) a[1], (AMQP.BasicProperties) a[3], (byte[]) a[4]);
                    return null;
                }
                case "waitForConfirmsOrDie" -> {
                    trip();
                    Exception e = unconfirmed;
                    unconfirmed = null;
                    if (e != null) {
                        closeQuietly();
                        throw e;
                    }
                    return null;
                }
                default -> {
                    return forward(inner, m, a);
                }
            }
        }

        private boolean readers(String queue) {
            return queue.endsWith(".readers") || queue.endsWith(".readers.alone");
        }

        private int consumers(String queue) {
            return registered.getOrDefault(queue, Map.of()).size();
        }

        /** A call that crosses the network: the world moves meanwhile, except under a read alone. */
        private void trip() throws IOException {
            if (!alone) {
                w.loop.roundTrip(owner, 400);
            }
            if (closed || !inner.isOpen()) {
                throw new IOException("channel closed");
            }
        }

        private GetResponse get(String queue) throws IOException {
            trip();
            SimBroker.Queue q = w.broker.queues.get(queue);
            if (q == null) {
                throw refused(404, "NOT_FOUND - no queue '" + queue + "'");
            }
            SimBroker.Message m = q.ready.pollFirst();
            if (m == null) {
                return null;
            }
            long tag = nextTag++;
            held.put(tag, new Held(q, m));
            Object letterId = m.header(RabbitHeaders.DEAD_LETTER_ID);
            letters.put(letterId != null ? letterId.toString() : "sha256:" + sha256(m.body).substring(0, 16),
                    w.logicalId(m.messageId(), new String(m.body, StandardCharsets.UTF_8)));
            Envelope envelope = new Envelope(tag, m.redelivered, m.exchange, m.routingKey);
            return new GetResponse(envelope, m.props, m.body, q.ready.size());
        }

        private void ack(long tag) throws IOException {
            trip();
            Held h = held.remove(tag);
            if (h == null) {
                w.loop.trace.violation(owner + " acked dead-letter tag " + tag + " it does not hold (removed twice?)");
                return;
            }
            String id = w.logicalId(h.message.messageId(), new String(h.message.body, StandardCharsets.UTF_8));
            boolean replay = replayed.contains(h.message.body);
            w.loop.trace.event(owner + " removed a dead letter of " + id + (replay ? " (replayed)" : ""));
            if (!replay) {
                removedUnreplayed.merge(id, 1, Integer::sum);
            }
        }

        private AMQP.Queue.DeclareOk passive(String queue) throws IOException {
            trip();
            if (readers(queue)) {
                return new AMQImpl.Queue.DeclareOk(queue, 0, consumers(queue));
            }
            SimBroker.Queue q = w.broker.queues.get(queue);
            if (q == null) {
                throw refused(404, "NOT_FOUND - no queue '" + queue + "'");
            }
            return new AMQImpl.Queue.DeclareOk(queue, q.ready.size(), q.consumers.size());
        }

        private String register(String queue, boolean exclusive) throws IOException {
            trip();
            Map<Reads, Boolean> consumers = registered.computeIfAbsent(queue, k -> new LinkedHashMap<>());
            if (exclusive && !consumers.isEmpty() || consumers.containsValue(true)) {
                throw refused(403, "ACCESS_REFUSED - queue '" + queue + "' in exclusive use");
            }
            consumers.put(this, exclusive);
            alone |= queue.endsWith(".alone");
            return "reader-" + nextTag++;
        }

        private void publish(String exchange, String routingKey, AMQP.BasicProperties props, byte[] body)
                throws IOException {
            trip();
            String id = w.logicalId(props.getMessageId(), new String(body, StandardCharsets.UTF_8));
            if (!exchange.isEmpty() || !routingKey.equals(World.QUEUE)) {
                w.loop.trace.violation(owner + ": a replay of " + id + " published to '" + exchange + "'/" + routingKey
                        + ", not to the channel's own queue only");
            }
            if (w.loop.trace.fault(w.loop.chance(CONFIRM_NACK), "replay of " + id + " nacked")) {
                unconfirmed = new IOException("nack of the replay");
                return;
            }
            w.broker.enqueue(w.broker.queues.get(World.QUEUE), w.broker.newMessage(exchange, routingKey, props, body));
            replaysStored.merge(id, 1, Integer::sum);
            w.loop.trace.event(owner + " replayed " + id + " to " + routingKey);
            if (w.loop.trace.fault(w.loop.chance(CONFIRM_LOST), "confirm of the replay of " + id + " lost")) {
                unconfirmed = new TimeoutException("no confirm of the replay");
                return;
            }
            replayed.add(body);
        }

        /** The broker refuses: it closes the channel and the client's call throws. */
        private IOException refused(int code, String text) {
            closeQuietly();
            AMQImpl.Channel.Close close = new AMQImpl.Channel.Close(code, text, 60, 20);
            return new IOException(new ShutdownSignalException(false, false, close, proxy));
        }

        /** Closes: every message held goes back to the head of its queue, in order; the registrations end. */
        void closeQuietly() {
            if (closed) {
                return;
            }
            closed = true;
            open.remove(this);
            registered.values().forEach(c -> c.remove(this));
            List<Held> back = new ArrayList<>(held.values());
            Collections.reverse(back);
            back.forEach(h -> w.broker.requeue(h.queue, h.message));
            held.clear();
            try {
                inner.abort();
            } catch (IOException | RuntimeException e) {
                // closed already, with its connection
            }
        }
    }
}
