package dev.onceonly.simulation;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmCallback;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Consumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ReturnCallback;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import com.rabbitmq.client.impl.AMQImpl;

import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The client side of {@link SimBroker}: amqp-client's {@link Connection} and {@link Channel} as
 * proxies that implement exactly the calls the connector makes (any other call fails the run, so a
 * new use of amqp-client is noticed here first). Callbacks (deliveries, confirms, returns,
 * shutdown signals) reach the client in order per channel on its instance's executor, as
 * amqp-client's dispatch does. Faults: a publish's confirm nacked or never sent, a consuming
 * channel closed by the broker.
 */
final class SimAmqp {

    /** Chances of the broker's faults, per publish and per delivery. */
    record Faults(double confirmNack, double confirmLost, double channelClose) {
        static final Faults NONE = new Faults(0, 0, 0);
    }

    private final SimBroker broker;
    private final SimLoop loop;
    private final Trace trace;
    private final SettlementWatch watch;
    private Faults faults = Faults.NONE;

    /** @param watch told of every delivery and of what the connector does with it */
    SimAmqp(SimBroker broker, SettlementWatch watch) {
        this.broker = broker;
        this.watch = watch;
        this.loop = broker.loop;
        this.trace = broker.trace;
    }

    void faults(Faults f) {
        this.faults = f;
    }

    /** A new connection of {@code exec}'s instance; it dies with the instance ({@link #crashed}). */
    Connection connect(SimExecutor exec, String name) {
        Conn c = new Conn(exec, name);
        conns.add(c);
        return c.proxy;
    }

    private final List<Conn> conns = new ArrayList<>();
    /** Instances past their drain timeout: what they requeue now goes back as a dying process's deliveries do. */
    private final java.util.Set<SimLoop.Owner> closing = new java.util.HashSet<>();

    /**
     * {@code owner} reached its drain timeout: the deliveries it still holds (in progress, or whose
     * copy the broker would not confirm) go back counted, as docs/connector.md says, like a crashed instance's.
     */
    void drainTimedOut(SimLoop.Owner owner) {
        closing.add(owner);
    }

    /** The broker closes every channel of connection {@code name} (a channel error): the client is told, the connection stays. */
    void closeChannels(String name) {
        for (Conn c : new ArrayList<>(conns)) {
            if (c.name.equals(name)) {
                for (Chan ch : new ArrayList<>(c.channels)) {
                    ch.closeQuietly(new ShutdownSignalException(false, false,
                            new AMQImpl.Channel.Close(406, "PRECONDITION_FAILED - simulated", 60, 40), ch.proxy));
                }
            }
        }
    }

    /** The instance died: its connections close, and the broker requeues what they had unacked. */
    void crashed(SimLoop.Owner owner) {
        for (Conn c : new ArrayList<>(conns)) {
            if (c.exec.owner == owner) {
                c.open = false;
                for (Chan ch : new ArrayList<>(c.channels)) {
                    ch.closeQuietly(null);
                }
                conns.remove(c);
            }
        }
    }

    final class Conn implements InvocationHandler {
        final SimExecutor exec;
        final String name;
        final Connection proxy;
        final List<Chan> channels = new ArrayList<>();
        boolean open = true;
        private int nextChannel = 1;

        Conn(SimExecutor exec, String name) {
            this.exec = exec;
            this.name = name;
            this.proxy = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, this);
        }

        @Override
        public Object invoke(Object p, Method m, Object[] a) throws IOException {
            switch (m.getName()) {
                case "createChannel" -> {
                    if (!open) {
                        throw new AlreadyClosedException(new ShutdownSignalException(true, false, null, proxy));
                    }
                    Chan ch = new Chan(this, nextChannel++);
                    channels.add(ch);
                    return ch.proxy;
                }
                case "isOpen" -> {
                    return open;
                }
                case "abort", "close" -> {
                    open = false;
                    for (Chan ch : new ArrayList<>(channels)) {
                        ch.closeQuietly(shutdown(true, true));
                    }
                    return null;
                }
                case "addShutdownListener", "removeShutdownListener" -> {
                    return null;
                }
                case "toString" -> {
                    return "SimConnection[" + name + "]";
                }
                case "hashCode" -> {
                    return System.identityHashCode(p);
                }
                case "equals" -> {
                    return p == a[0];
                }
                default -> throw new UnsupportedOperationException("the simulated connection has no " + m.getName());
            }
        }
    }

    /** One AMQP channel: a consumer, its unacked deliveries, confirms. */
    final class Chan implements InvocationHandler {
        final Conn conn;
        final int number;
        final Channel proxy;
        boolean open = true;
        int prefetch;
        final Map<Long, SimBroker.Message> unacked = new LinkedHashMap<>();
        private final Map<Long, SimBroker.Queue> unackedFrom = new LinkedHashMap<>();
        private final Map<Long, SettlementWatch.Delivered> watched = new LinkedHashMap<>();
        private long nextTag = 1;
        private Consumer consumer;
        private String consumerTag;
        private SimBroker.Queue consuming;
        private boolean confirms;
        private long nextSeq = 1;
        private final List<ConfirmCallback[]> confirmListeners = new ArrayList<>();
        private final List<ReturnCallback> returnListeners = new ArrayList<>();
        private final List<ShutdownListener> shutdownListeners = new ArrayList<>();
        private final Deque<Runnable> callbacks = new ArrayDeque<>();
        private boolean dispatching;

        Chan(Conn conn, int number) {
            this.conn = conn;
            this.number = number;
            this.proxy = (Channel) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Channel.class}, this);
        }

        @Override
        public Object invoke(Object p, Method m, Object[] a) throws IOException {
            String name = m.getName();
            switch (name) {
                case "isOpen" -> {
                    return open;
                }
                case "toString" -> {
                    return "SimChannel[" + conn.name + "#" + number + "]";
                }
                case "hashCode" -> {
                    return System.identityHashCode(p);
                }
                case "equals" -> {
                    return p == a[0];
                }
                case "getChannelNumber" -> {
                    return number;
                }
                case "getConnection" -> {
                    return conn.proxy;
                }
                case "abort", "close" -> {
                    closeQuietly(shutdown(false, true));
                    return null;
                }
                case "addShutdownListener" -> {
                    shutdownListeners.add((ShutdownListener) a[0]);
                    return null;
                }
                default -> {
                    // every other call needs an open channel
                }
            }
            if (!open) {
                throw new AlreadyClosedException(shutdown(false, false));
            }
            switch (name) {
                case "basicQos" -> prefetch = (Integer) a[a.length == 1 ? 0 : 1];
                case "queueDeclare" -> {
                    declare(() -> broker.declareQueue((String) a[0], cast(a[4])));
                    return new AMQImpl.Queue.DeclareOk((String) a[0], 0, 0);
                }
                case "queueDeclarePassive" -> {
                    if (!broker.queues.containsKey((String) a[0])) {
                        declare(() -> {
                            throw new IllegalStateException("NOT_FOUND - no queue '" + a[0] + "'");
                        });
                    }
                    return new AMQImpl.Queue.DeclareOk((String) a[0], 0, 0);
                }
                case "exchangeDeclare" -> broker.declareExchange((String) a[0], String.valueOf(a[1]));
                case "queueBind" -> broker.bind((String) a[0], (String) a[1], (String) a[2]);
                case "basicConsume" -> {
                    return consume((String) a[0], (String) a[2], (Consumer) a[3]);
                }
                case "basicCancel" -> {
                    cancel();
                    return null;
                }
                case "basicAck" -> settle((Long) a[0], false, "ack");
                case "basicNack" -> settle((Long) a[0], (Boolean) a[2], "nack");
                case "confirmSelect" -> confirms = true;
                case "addConfirmListener" -> confirmListeners.add(new ConfirmCallback[] {(ConfirmCallback) a[0], (ConfirmCallback) a[1]});
                case "addReturnListener" -> returnListeners.add((ReturnCallback) a[0]);
                case "getNextPublishSeqNo" -> {
                    return confirms ? nextSeq : 0L;
                }
                case "basicPublish" -> {
                    if (a.length != 5) {
                        throw new UnsupportedOperationException("basicPublish with " + a.length + " arguments");
                    }
                    publish((String) a[0], (String) a[1], (Boolean) a[2], (AMQP.BasicProperties) a[3], (byte[]) a[4]);
                }
                default -> throw new UnsupportedOperationException("the simulated channel has no " + name);
            }
            return null;
        }

        @SuppressWarnings("unchecked")
        private static Map<String, Object> cast(Object o) {
            return (Map<String, Object>) o;
        }

        /** A declaration the broker refuses closes the channel, as RabbitMQ does (406, 404). */
        private void declare(Runnable r) throws IOException {
            try {
                r.run();
            } catch (IllegalStateException e) {
                ShutdownSignalException sig = new ShutdownSignalException(false, false,
                        new AMQImpl.Channel.Close(e.getMessage().startsWith("NOT_FOUND") ? 404 : 406, e.getMessage(), 50, 10), proxy);
                closeQuietly(sig);
                throw new IOException(sig);
            }
        }

        private String consume(String queue, String tag, Consumer c) throws IOException {
            SimBroker.Queue q = broker.queues.get(queue);
            if (q == null) {
                declare(() -> {
                    throw new IllegalStateException("NOT_FOUND - no queue '" + queue + "'");
                });
            }
            consumer = c;
            consumerTag = tag + "#" + number;
            consuming = q;
            q.consumers.add(this);
            String t = consumerTag;
            callback(() -> c.handleConsumeOk(t));
            broker.pump();
            return t;
        }

        private void cancel() {
            if (consuming != null) {
                consuming.consumers.remove(this);
                SimBroker.Queue q = consuming;
                consuming = null;
                String t = consumerTag;
                Consumer c = consumer;
                callback(() -> c.handleCancelOk(t));
                // Unacked deliveries stay with the channel until acked, nacked or the channel closes.
                unackedFrom.replaceAll((tag, from) -> from == null ? q : from);
            }
        }

        /** The broker hands {@code m} from {@code q} to this channel's consumer. */
        void deliver(SimBroker.Queue q, SimBroker.Message m) {
            long tag = nextTag++;
            unacked.put(tag, m);
            unackedFrom.put(tag, q);
            SettlementWatch.Delivered delivered = watch.delivered(q, m);
            watched.put(tag, delivered);
            Envelope env = new Envelope(tag, m.redelivered, m.exchange, m.routingKey);
            AMQP.BasicProperties props = SimBroker.delivered(q, m);
            Consumer c = consumer;
            String t = consumerTag;
            trace.event(conn.name + " <- " + m.messageId() + " tag " + tag + (m.redelivered ? " redelivered" : "")
                    + (m.deliveryCount > 0 ? " count " + m.deliveryCount : ""));
            callback(() -> {
                try {
                    c.handleDelivery(t, env, props, delivered.body);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            if (trace.fault(loop.chance(faults.channelClose()), "broker closes " + conn.name + "#" + number)) {
                // As for an ack timeout or a channel error: the broker takes the unacked deliveries back.
                loop.schedule(broker.self, TimeUnit.MICROSECONDS.toNanos(loop.random.nextLong(3_000)), 0,
                        () -> closeQuietly(new ShutdownSignalException(false, false,
                                new AMQImpl.Channel.Close(406, "PRECONDITION_FAILED - simulated", 60, 80), proxy)));
            }
        }

        private void settle(long tag, boolean requeue, String what) {
            SimBroker.Message m = unacked.remove(tag);
            SimBroker.Queue from = unackedFrom.remove(tag);
            SettlementWatch.Delivered delivered = watched.remove(tag);
            if (m == null) {
                // RabbitMQ closes the channel: PRECONDITION_FAILED - unknown delivery tag.
                trace.violation(conn.name + "#" + number + " " + what + " of unknown delivery tag " + tag + " (settled twice?)");
                closeQuietly(new ShutdownSignalException(false, false,
                        new AMQImpl.Channel.Close(406, "PRECONDITION_FAILED - unknown delivery tag " + tag, 60, 80), proxy));
                return;
            }
            trace.event(conn.name + " " + what + (what.equals("nack") && requeue ? " requeue " : " ") + m.messageId() + " tag " + tag);
            String which = conn.name + " " + m.messageId() + " tag " + tag;
            if (what.equals("ack")) {
                watch.acked(delivered, which);
            } else if (requeue) {
                watch.requeued(delivered, which);
            }
            if (what.equals("nack")) {
                if (requeue && closing.contains(conn.exec.owner)) {
                    broker.returned(from, m); // what a stopping instance still had at its drain timeout: as if it died
                } else if (requeue) {
                    broker.requeue(from, m);
                } else {
                    broker.drop(m, "nacked without requeue and no dead-letter exchange");
                }
            }
            broker.pump();
        }

        private void publish(String exchange, String routingKey, boolean mandatory, AMQP.BasicProperties props, byte[] body) {
            long seq = confirms ? nextSeq++ : 0;
            watch.published(props.getHeaders(), body, conn.name + " " + props.getMessageId());
            List<SimBroker.Queue> to = broker.route(exchange, routingKey);
            if (to == null) {
                ShutdownSignalException sig = new ShutdownSignalException(false, false,
                        new AMQImpl.Channel.Close(404, "NOT_FOUND - no exchange '" + exchange + "'", 60, 40), proxy);
                loop.schedule(broker.self, 1_000, 0, () -> closeQuietly(sig));
                return;
            }
            boolean lost = trace.fault(loop.chance(faults.confirmLost()), "confirm of " + props.getMessageId() + " lost");
            boolean nack = !lost && trace.fault(loop.chance(faults.confirmNack()), "publish of " + props.getMessageId() + " nacked");
            boolean refused = nack;
            if (!nack) {
                for (SimBroker.Queue q : to) {
                    if (q.full()) {
                        refused = true; // reject-publish: nacked, not stored
                    }
                }
                if (!refused) {
                    for (SimBroker.Queue q : to) {
                        broker.enqueue(q, broker.newMessage(exchange, routingKey, props, body));
                    }
                }
            }
            trace.event(conn.name + " publish " + props.getMessageId() + " to '" + exchange + "'/" + routingKey
                    + (to.isEmpty() ? " unroutable" : refused ? " refused" : ""));
            if (to.isEmpty() && mandatory && !refused) {
                callback(() -> {
                    for (ReturnCallback r : returnListeners) {
                        r.handle(new com.rabbitmq.client.Return(312, "NO_ROUTE", exchange, routingKey, props, body));
                    }
                });
            }
            if (confirms && !lost) {
                boolean ok = !refused;
                long after = TimeUnit.MICROSECONDS.toNanos(50 + loop.random.nextLong(500));
                loop.schedule(broker.self, after, 0, () -> callback(() -> {
                    for (ConfirmCallback[] l : confirmListeners) {
                        try {
                            l[ok ? 0 : 1].handle(seq, false);
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }));
            }
        }

        /** Closes the channel: unacked deliveries back to their queues, the client told (unless its instance died). */
        void closeQuietly(ShutdownSignalException sig) {
            if (!open) {
                return;
            }
            open = false;
            if (consuming != null) {
                consuming.consumers.remove(this);
            }
            List<Long> tags = new ArrayList<>(unacked.keySet());
            for (Long tag : tags) {
                broker.returned(unackedFrom.get(tag), unacked.get(tag));
            }
            unacked.clear();
            unackedFrom.clear();
            watched.clear();
            conn.channels.remove(this);
            if (sig != null && !conn.exec.owner.dead) {
                Consumer c = consumer;
                String t = consumerTag;
                callback(() -> {
                    if (c != null) {
                        c.handleShutdownSignal(t, sig);
                    }
                    for (ShutdownListener l : shutdownListeners) {
                        l.shutdownCompleted(sig);
                    }
                });
            }
            broker.pump();
        }

        /** Runs {@code r} on the instance's executor after the callbacks queued before it, one at a time. */
        private void callback(Runnable r) {
            callbacks.addLast(r);
            if (!dispatching) {
                dispatching = true;
                runCallbacksSoon();
            }
        }

        private void runCallbacksSoon() {
            try {
                conn.exec.execute(() -> {
                    Runnable next = callbacks.pollFirst();
                    try {
                        if (next != null) {
                            next.run();
                        }
                    } finally {
                        if (callbacks.isEmpty()) {
                            dispatching = false;
                        } else {
                            runCallbacksSoon();
                        }
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                callbacks.clear(); // the instance is gone
                dispatching = false;
            }
        }
    }

    private static ShutdownSignalException shutdown(boolean hard, boolean byApplication) {
        return new ShutdownSignalException(hard, byApplication, null, null);
    }
}
