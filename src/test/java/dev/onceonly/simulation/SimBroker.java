package dev.onceonly.simulation;

import com.rabbitmq.client.AMQP;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A RabbitMQ broker in memory, with the semantics the connector depends on (RabbitMQ 3.10):
 * queues classic or quorum ({@code x-queue-type}), prefetch, unacked deliveries requeued with
 * {@code redelivered} when their channel closes, {@code x-delivery-count} and {@code x-delivery-limit}
 * on quorum queues, per-queue message TTL dead-lettering ({@code x-message-ttl},
 * {@code x-dead-letter-exchange}/{@code -routing-key}), {@code x-max-length} with
 * {@code x-overflow=reject-publish} (a refused publish is nacked; a classic queue drops what is
 * dead-lettered into it when full, a quorum source with {@code at-least-once} keeps it), direct,
 * topic (exact and {@code #}) and default-exchange routing, publisher confirms and mandatory returns.
 * The client side is {@link SimAmqp}. The broker never dies; its faults are injected by
 * {@link SimAmqp} (nacked or lost confirms, channels it closes).
 */
final class SimBroker {

    final SimLoop loop;
    final Trace trace;
    final SimLoop.Owner self = new SimLoop.Owner("broker");
    final Map<String, Queue> queues = new LinkedHashMap<>();
    final Map<String, Exchange> exchanges = new HashMap<>();
    /** Messages the broker itself threw away (a full queue refused a dead letter, a delivery limit without DLX). */
    final List<Message> dropped = new ArrayList<>();
    /** Per published copy: deliveries returned because their channel closed (counted by a quorum queue). */
    final Map<String, Integer> returnsNotByConnector = new HashMap<>();
    private final Chains chains;
    private long nextMessageId;
    private boolean pumpQueued;

    /** Names the published copy a message is (see {@code World.chain}). */
    interface Chains {
        String of(String messageId, byte[] body, Map<String, Object> headers);
    }

    SimBroker(SimLoop loop, Trace trace, Chains chains) {
        this.loop = loop;
        this.trace = trace;
        this.chains = chains;
        exchanges.put("", new Exchange("", "direct"));
    }

    /** A message in a queue, or out with a consumer. */
    static final class Message {
        final long id;
        final String exchange;
        final String routingKey;
        AMQP.BasicProperties props;
        final byte[] body;
        int deliveryCount;
        boolean redelivered;

        Message(long id, String exchange, String routingKey, AMQP.BasicProperties props, byte[] body) {
            this.id = id;
            this.exchange = exchange;
            this.routingKey = routingKey;
            this.props = props;
            this.body = body;
        }

        String messageId() {
            return props.getMessageId();
        }

        Object header(String name) {
            return props.getHeaders() == null ? null : props.getHeaders().get(name);
        }
    }

    static final class Exchange {
        final String name;
        final String type;
        final List<String[]> bindings = new ArrayList<>(); // {queue, key}

        Exchange(String name, String type) {
            this.name = name;
            this.type = type;
        }
    }

    final class Queue {
        final String name;
        final Map<String, Object> args;
        final boolean quorum;
        final Deque<Message> ready = new ArrayDeque<>();
        final List<SimAmqp.Chan> consumers = new ArrayList<>();

        Queue(String name, Map<String, Object> args) {
            this.name = name;
            this.args = args == null ? Map.of() : Map.copyOf(args);
            this.quorum = "quorum".equals(this.args.get("x-queue-type"));
        }

        long ttlMillis() {
            return this.args.get("x-message-ttl") instanceof Number n ? n.longValue() : -1;
        }

        int maxLength() {
            return this.args.get("x-max-length") instanceof Number n ? n.intValue() : Integer.MAX_VALUE;
        }

        boolean full() {
            return ready.size() + outstanding() >= maxLength() && "reject-publish".equals(this.args.get("x-overflow"));
        }

        int outstanding() {
            int n = 0;
            for (SimAmqp.Chan c : consumers) {
                n += c.unacked.size();
            }
            return n;
        }

        /** Where a message dead-lettered from here goes: {exchange, routing key}, or null. */
        String[] deadLetterTarget(Message m) {
            Object dlx = this.args.get("x-dead-letter-exchange");
            if (dlx == null) {
                return null;
            }
            Object rk = this.args.get("x-dead-letter-routing-key");
            return new String[] {dlx.toString(), rk == null ? m.routingKey : rk.toString()};
        }
    }

    // ------------------------------------------------------------------ topology

    void declareQueue(String name, Map<String, Object> args) {
        Queue existing = queues.get(name);
        if (existing != null) {
            Map<String, Object> wanted = args == null ? Map.of() : args;
            if (!existing.args.equals(Map.copyOf(wanted))) {
                throw new IllegalStateException("PRECONDITION_FAILED - inequivalent arg for queue '" + name + "'");
            }
            return;
        }
        queues.put(name, new Queue(name, args));
    }

    void declareExchange(String name, String type) {
        exchanges.putIfAbsent(name, new Exchange(name, type));
    }

    /** Binds {@code queue}; a binding that exists already is not added again (RabbitMQ's bindings are a set). */
    void bind(String queue, String exchange, String key) {
        List<String[]> bindings = exchanges.get(exchange).bindings;
        if (bindings.stream().noneMatch(b -> b[0].equals(queue) && b[1].equals(key))) {
            bindings.add(new String[] {queue, key});
        }
    }

    // ------------------------------------------------------------------ publishing

    /** The queues a message goes to; empty when unroutable; null when the exchange does not exist. */
    List<Queue> route(String exchange, String routingKey) {
        if (exchange.isEmpty()) {
            Queue q = queues.get(routingKey);
            return q == null ? List.of() : List.of(q);
        }
        Exchange x = exchanges.get(exchange);
        if (x == null) {
            return null;
        }
        List<Queue> to = new ArrayList<>();
        for (String[] b : x.bindings) {
            if (b[1].equals("#") || b[1].equals(routingKey)) {
                to.add(queues.get(b[0]));
            }
        }
        return to;
    }

    Message newMessage(String exchange, String routingKey, AMQP.BasicProperties props, byte[] body) {
        return new Message(++nextMessageId, exchange, routingKey, props, body);
    }

    /** Puts a message in a queue (its TTL starts now). */
    void enqueue(Queue q, Message m) {
        q.ready.addLast(m);
        long ttl = q.ttlMillis();
        if (ttl >= 0) {
            loop.schedule(self, TimeUnit.MILLISECONDS.toNanos(ttl), 0, () -> expire(q, m));
        }
        pump();
    }

    private void expire(Queue q, Message m) {
        if (!q.ready.contains(m)) {
            return;
        }
        String[] target = q.deadLetterTarget(m);
        q.ready.remove(m);
        if (target == null) {
            drop(m, "expired in " + q.name + " with no dead-letter exchange");
            return;
        }
        List<Queue> to = route(target[0], target[1]);
        Map<String, Object> headers = new HashMap<>(m.props.getHeaders() == null ? Map.of() : m.props.getHeaders());
        headers.put("x-death", List.of(Map.of("queue", q.name, "reason", "expired")));
        AMQP.BasicProperties props = m.props.builder().headers(headers).build();
        for (Queue dest : to == null ? List.<Queue>of() : to) {
            if (dest.full()) {
                if (q.quorum && "at-least-once".equals(q.args.get("x-dead-letter-strategy"))) {
                    q.ready.addFirst(m); // kept, dead-lettered again later
                    loop.schedule(self, TimeUnit.MILLISECONDS.toNanos(50), 0, () -> expire(q, m));
                    return;
                }
                drop(m, "dead-lettered from " + q.name + " into full queue " + dest.name);
                continue;
            }
            Message copy = new Message(m.id, target[0], target[1], props, m.body);
            enqueue(dest, copy);
        }
        if (to == null || to.isEmpty()) {
            drop(m, "dead-lettered from " + q.name + " to nowhere");
        }
    }

    void drop(Message m, String why) {
        dropped.add(m);
        trace.event("broker dropped message " + m.messageId() + ": " + why);
    }

    // ------------------------------------------------------------------ consuming

    /** A delivery went back to its queue because its channel closed. */
    void returned(Queue q, Message m) {
        returnsNotByConnector.merge(chains.of(m.messageId(), m.body, m.props.getHeaders()), 1, Integer::sum);
        requeue(q, m);
    }

    /** A delivery went back to its queue (nack with requeue, or its channel closed). */
    void requeue(Queue q, Message m) {
        m.redelivered = true;
        if (q.quorum) {
            m.deliveryCount++;
            Object limit = q.args.get("x-delivery-limit");
            if (limit instanceof Number n && m.deliveryCount > n.intValue()) {
                trace.event("quorum delivery limit reached for " + m.messageId());
                String[] target = q.deadLetterTarget(m);
                List<Queue> to = target == null ? null : route(target[0], target[1]);
                if (to == null || to.isEmpty()) {
                    drop(m, "delivery limit of " + q.name);
                } else {
                    Map<String, Object> headers = new HashMap<>(m.props.getHeaders() == null ? Map.of() : m.props.getHeaders());
                    headers.put("x-death", List.of(Map.of("queue", q.name, "reason", "delivery_limit")));
                    AMQP.BasicProperties props = m.props.builder().headers(headers).build();
                    for (Queue dest : to) {
                        enqueue(dest, new Message(m.id, target[0], target[1], props, m.body));
                    }
                }
                return;
            }
        }
        q.ready.addFirst(m);
        pump();
    }

    /** Schedules one pass that hands ready messages to consumers with room. */
    void pump() {
        if (pumpQueued) {
            return;
        }
        pumpQueued = true;
        loop.schedule(self, TimeUnit.MICROSECONDS.toNanos(20), TimeUnit.MICROSECONDS.toNanos(200), () -> {
            pumpQueued = false;
            for (Queue q : queues.values()) {
                deliverFrom(q);
            }
        });
    }

    private void deliverFrom(Queue q) {
        while (!q.ready.isEmpty()) {
            List<SimAmqp.Chan> room = new ArrayList<>();
            for (SimAmqp.Chan c : q.consumers) {
                if (c.open && (c.prefetch == 0 || c.unacked.size() < c.prefetch)) {
                    room.add(c);
                }
            }
            if (room.isEmpty()) {
                return;
            }
            SimAmqp.Chan c = loop.pick(room);
            Message m = q.ready.pollFirst();
            c.deliver(q, m);
        }
    }

    /** What a consumer of {@code q} sees of {@code m}'s headers: a quorum queue adds its count. */
    static AMQP.BasicProperties delivered(Queue q, Message m) {
        if (!q.quorum || m.deliveryCount == 0) {
            return m.props;
        }
        Map<String, Object> headers = new HashMap<>(m.props.getHeaders() == null ? Map.of() : m.props.getHeaders());
        headers.put("x-delivery-count", (long) m.deliveryCount);
        return m.props.builder().headers(headers).build();
    }

    /** {@return messages ready or unacked in {@code queue}} */
    int depth(String queue) {
        Queue q = queues.get(queue);
        return q == null ? 0 : q.ready.size() + q.outstanding();
    }
}
