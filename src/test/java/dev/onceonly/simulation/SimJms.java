package dev.onceonly.simulation;

import jakarta.jms.Queue;
import jakarta.jms.TextMessage;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A Jakarta Messaging provider's queue, as Liberty's messaging engine runs one for message-driven
 * beans: a message goes to a free listener session; its receipt is part of the listener's
 * transaction (it commits with the business writes, or rolls back); a rolled-back message is
 * redelivered after a small delay (Liberty's engine redelivers at once) with
 * {@code JMSXDeliveryCount} one higher; after {@link #limit} deliveries (the queue's
 * {@code maxRedeliveryCount}: 5 by default) the last rollback moves it to the queue's exception
 * destination with the provider's reason; an instance's death rolls back its open transactions,
 * which redelivers their messages. The dead-letter queue is the one {@code JmsRefusals} sends to.
 */
final class SimJms {

    /** How a message in the exception destination is reported among the dead letters. */
    static final String EXCEPTION_DESTINATION = "exception destination";

    static final String QUEUE = "sim.orders";
    static final String DLQ = "sim.orders.dlq";
    /** Properties the publisher sets: the key ({@code key-header}), and which published copy a message is. */
    static final String KEY = "orderId";
    static final String COPY = "simCopy";
    /** A decision of {@link Msg#decisions}: a duplicate the ledger caught. */
    static final String LEDGER_DUPLICATE = "DUPLICATE by the ledger";

    /** One message sent to the queue; each send has its own {@code JMSMessageID}. */
    static final class Msg {
        final String jmsId;
        final String logicalId;
        final String text;
        final Map<String, Object> properties;
        int deliveries;
        /** BUSY and RETRY refusals of its deliveries. */
        int heldRounds;
        /**
         * What the guard decided, by delivery number ({@code JMSXDeliveryCount}): the decisions of
         * two deliveries may be reported in either order (a rolled-back delivery's completion may
         * still run when the next one is refused).
         */
        final Map<Integer, String> decisions = new HashMap<>();
        /** The digest of its key, once the guard derived it. */
        String keyDigest = "";
        /** Why the provider moved it to the exception destination, or {@code null}. */
        String exceptionReason;

        Msg(String jmsId, String logicalId, String text, Map<String, Object> properties) {
            this.jmsId = jmsId;
            this.logicalId = logicalId;
            this.text = text;
            this.properties = properties;
        }
    }

    /** One delivery of a message to a listener session; its receipt is open until its transaction ends. */
    record Delivery(Msg msg, int count) {
    }

    final int limit;
    final Queue queue = SimJmsApi.queue(QUEUE);
    final Queue deadLetterQueue = SimJmsApi.queue(DLQ);
    final Deque<Msg> ready = new ArrayDeque<>();
    final Map<Delivery, SimLoop.Owner> open = new LinkedHashMap<>();
    final List<Msg> exceptionDestination = new ArrayList<>();
    final List<TextMessage> deadLetters = new ArrayList<>();
    final List<Msg> sent = new ArrayList<>();
    /** Per logical message, the instances that ran its handler (with the ledger, a done mark is deferred to the transaction's end). */
    final Map<String, List<SimLoop.Owner>> processedOn = new HashMap<>();
    private final List<SimJmsListener> listeners = new ArrayList<>();
    private final SimLoop loop;
    private final SimLoop.Owner self = new SimLoop.Owner("jms provider");
    private boolean pumpQueued;
    /** Messages rolled back and not yet back in the queue (the redelivery delay). */
    private int returning;

    SimJms(SimLoop loop, int limit) {
        this.loop = loop;
        this.limit = limit;
    }

    /** A producer sends one copy of {@code logicalId} (keyless: without the key property). */
    void send(String logicalId, String copy, boolean keyed) {
        Map<String, Object> props = new LinkedHashMap<>();
        if (keyed) {
            props.put(KEY, logicalId);
        }
        props.put(COPY, copy);
        Msg m = new Msg("ID:sim-" + (sent.size() + 1), logicalId, logicalId + ":body", props);
        sent.add(m);
        loop.trace.event("producer -> " + logicalId + " as " + m.jmsId);
        ready.addLast(m);
        pump();
    }

    void register(SimJmsListener listener) {
        listeners.add(listener);
        pump();
    }

    /** The message as this delivery hands it to the listener: its properties and {@code JMSXDeliveryCount}. */
    TextMessage received(Delivery d) {
        Map<String, Object> props = new LinkedHashMap<>(d.msg().properties);
        props.put("JMSXDeliveryCount", d.count());
        return SimJmsApi.message(new SimJmsApi.Data(d.msg().jmsId, queue, d.msg().text, props));
    }

    /** The delivery's transaction committed: the receipt with it. */
    void consumed(Delivery d) {
        open.remove(d);
        pump();
    }

    /** The delivery's transaction rolled back (no-op if its receipt committed or was given back already). */
    void rolledBack(Delivery d, String why, Duration held) {
        if (open.remove(d) != null) {
            giveBack(d.msg(), why, held.toNanos());
        }
        pump();
    }

    /** {@code owner} died: the database rolls back its transactions, and the provider takes their messages back. */
    void crashed(SimLoop.Owner owner) {
        listeners.removeIf(l -> l.owner() == owner);
        for (Delivery d : new ArrayList<>(open.keySet())) {
            if (open.get(d) == owner) {
                open.remove(d);
                giveBack(d.msg(), "the listener's instance died", 0);
            }
        }
        pump();
    }

    /** A message moved to the dead-letter queue (its send committed with the listener's transaction). */
    void deadLettered(TextMessage letter) {
        deadLetters.add(letter);
    }

    /** Back to the queue after a small delay (and {@code heldNanos} the listener held it), or aside at the limit. */
    private void giveBack(Msg m, String why, long heldNanos) {
        if (m.deliveries >= limit) {
            m.exceptionReason = "delivered " + m.deliveries + " times (maxRedeliveryCount " + limit + "), last rolled back: " + why;
            exceptionDestination.add(m);
            loop.trace.event("jms: " + m.jmsId + " (" + m.logicalId + ") to the exception destination: " + m.exceptionReason);
            return;
        }
        returning++;
        loop.schedule(self, heldNanos, TimeUnit.MILLISECONDS.toNanos(2), () -> {
            returning--;
            ready.addFirst(m);
            pump();
        });
    }

    private void pump() {
        if (pumpQueued) {
            return;
        }
        pumpQueued = true;
        loop.schedule(self, TimeUnit.MICROSECONDS.toNanos(20), TimeUnit.MICROSECONDS.toNanos(200), () -> {
            pumpQueued = false;
            while (!ready.isEmpty()) {
                List<SimJmsListener> free = new ArrayList<>();
                for (SimJmsListener l : listeners) {
                    if (l.hasFreeSession()) {
                        free.add(l);
                    }
                }
                if (free.isEmpty()) {
                    return;
                }
                SimJmsListener l = loop.pick(free);
                Msg m = ready.pollFirst();
                m.deliveries++;
                Delivery d = new Delivery(m, m.deliveries);
                open.put(d, l.owner());
                l.deliver(d);
            }
        });
    }

    /**
     * Messages taken aside, by logical id: in the dead-letter queue (a dead letter without the
     * guard's outcome and reason is a violation), or in the exception destination (with the
     * provider's reason).
     */
    Map<String, String> takenAside(Trace trace) {
        Map<String, String> found = new LinkedHashMap<>();
        for (TextMessage letter : deadLetters) {
            SimJmsApi.Data d = SimJmsApi.data(letter);
            Object outcome = d.properties.get("onceonly_outcome");
            if (outcome == null || d.properties.get("onceonly_reason") == null) {
                trace.violation(d.text + " in the dead-letter queue without the guard's outcome and reason");
            }
            found.put(d.text.substring(0, d.text.indexOf(':')), "dead-letter queue: " + outcome);
        }
        for (Msg m : exceptionDestination) {
            found.putIfAbsent(m.logicalId, EXCEPTION_DESTINATION + ": " + m.exceptionReason);
        }
        return found;
    }

    /**
     * What must hold of the provider once the world settled: nothing left in the queue or in a
     * transaction, and no BUSY round right after a duplicate the ledger caught (its key is marked
     * done as its transaction ends, so its redelivery is a duplicate the claim store finds, not a
     * held round spending the provider's limit), unless a store fault hit that message's key
     * ({@code storeFaulted}: the mark then waits for the sweep, or a claim whose answer was lost is
     * held until its lease ends). Reports the most held rounds one
     * message had, and the ledger's duplicates that the limit took aside all the same (their
     * earlier deliveries spent it).
     */
    void check(Trace trace, java.util.Set<String> storeFaulted) {
        if (!settled()) {
            trace.violation("JMS queue not drained: " + ready.size() + " ready, " + open.size() + " in transactions, " + returning + " returning");
        }
        int most = 0;
        int aside = 0;
        for (Msg m : sent) {
            most = Math.max(most, m.heldRounds);
            boolean caught = false;
            for (Map.Entry<Integer, String> d : m.decisions.entrySet()) {
                if (d.getValue().equals(LEDGER_DUPLICATE)) {
                    caught = true;
                    if ("BUSY".equals(m.decisions.get(d.getKey() + 1)) && !storeFaulted.contains(m.logicalId) && !deferredMarkLost(m)) {
                        trace.violation(m.jmsId + " (" + m.logicalId + "), a duplicate the ledger caught on delivery " + d.getKey()
                                + ", was BUSY on the next" + (m.exceptionReason == null ? "" : ", and went to the exception destination: "
                                + m.exceptionReason));
                    }
                }
            }
            if (caught && m.exceptionReason != null) {
                aside++;
            }
        }
        trace.event("jms: at most " + most + " BUSY/RETRY rounds for one message; " + exceptionDestination.size()
                + " in the exception destination (" + aside + " duplicates the ledger caught), " + deadLetters.size()
                + " in the dead-letter queue");
    }

    /**
     * Whether an instance that ran the message's handler died (with the ledger, its done mark
     * waits in DoneWriter: the key stays in progress until its lease ends, a BUSY docs/guarantees.md names),
     * so that the ledger's duplicate could not mark a key another holder had. Conservative: a
     * death at any time after counts.
     */
    private boolean deferredMarkLost(Msg m) {
        return processedOn.getOrDefault(m.logicalId, List.of()).stream().anyMatch(o -> o.dead);
    }

    boolean settled() {
        return ready.isEmpty() && open.isEmpty() && returning == 0;
    }
}
