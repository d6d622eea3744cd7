package dev.onceonly.simulation;

import com.rabbitmq.client.AMQP;
import dev.onceonly.spi.ClaimStore;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * One simulated run: a broker, a claim store, a database and two application instances, a
 * workload of messages published with copies, and the faults of the mode, injected until
 * {@link #FAULTS_UNTIL_MS}; then the world settles and {@link Invariants} checks what happened.
 */
final class World {

    static final String QUEUE = "sim.work";
    static final String EXCHANGE = "sim.orders";
    static final String POISON = "poison";
    static final String KEYLESS = "keyless";
    static final String COPY_HEADER = "x-sim-copy";
    /** Where the outbox's messages go (by the default exchange); not consumed, read at the end. */
    static final String OUTBOX_QUEUE = "sim.outbox";
    private static final int INSTANCES = 2;
    private static final long FAULTS_UNTIL_MS = 2_000;
    private static final long SETTLE_MS = 120_000;
    private static final long TICK_MS = 5;

    final Mode mode;
    final SimLoop loop;
    final SimBroker broker;
    final SimAmqp amqp;
    /** Checks each broker action the connector takes against the rules. */
    final SettlementWatch settlements = new SettlementWatch(this);
    final SimDatabase db;
    /** The outbox table, in outbox modes; null otherwise. */
    final SimOutbox outbox;
    /** The JMS provider in JMS modes, else {@code null}. */
    final SimJms jms;
    /** The broker's side of the dead-letter reads, on every instance's connections. */
    final SimDeadLetterReads reads = new SimDeadLetterReads(this);
    /** The operator's paths and the ledger purge, in the runs that draw them. */
    final SimOperators operators;
    /** Stop-the-world pauses and the instances' clock skews. */
    final StopsAndClocks stops;
    /** A producer forging the connector's headers, in the runs that draw one. */
    final SimHostileProducer hostile;
    /** The handler's stored results, in modes that keep them; null otherwise. */
    final SimResults results;
    final Set<String> keysSeen = new LinkedHashSet<>();
    /** Logical messages published: id → kind. */
    final Map<String, String> published = new LinkedHashMap<>();
    /** Logical messages whose effect may repeat by design (no ledger), with why. */
    final Map<String, String> windows = new HashMap<>();
    /** Store keys a window opened for at the store (a fault, a late done mark), with why; the logical message of each store key a handler ran for. */
    final Map<String, String> storeFaulted = new LinkedHashMap<>();
    final Map<String, String> keyOf = new HashMap<>();
    private final Map<String, Integer> failures = new HashMap<>();
    final SimInstance[] instances = new SimInstance[INSTANCES];
    /** Per slot, the step of the signing key's rotation its instance runs at ({@link Mode#channelAttributes}). */
    private final int[] rotation = new int[INSTANCES];
    /** Every instance's connection to the store, in the order they were opened. */
    final List<SimStore> stores = new ArrayList<>();
    private int incarnations;
    private final StoreBackend backend;
    ClaimStore store;

    World(long seed, Mode mode, Trace trace) {
        this.mode = mode;
        this.loop = new SimLoop(seed, trace);
        trace.clock(loop);
        this.broker = new SimBroker(loop, trace, this::chain);
        this.amqp = new SimAmqp(broker, settlements);
        amqp.faults(mode.brokerFaults());
        this.jms = mode.jmsDeliveries() > 0 ? new SimJms(loop, mode.jmsDeliveries()) : null;
        this.db = new SimDatabase(loop, mode.databaseFaults(), this::windowOpened);
        this.results = mode.results() ? new SimResults(this) : null;
        this.operators = new SimOperators(this);
        this.hostile = new SimHostileProducer(this);
        this.stops = new StopsAndClocks(this, INSTANCES);
        this.backend = StoreBackend.open(mode, loop, broker.self, stops.instanceClock(), this::storeWindow,
                token -> stores.stream().anyMatch(s -> s.confirmedUnmarked(token)));
        this.store = backend.store;
        this.outbox = mode.outbox() ? new SimOutbox(db, loop) : null;
        if (outbox != null) {
            broker.declareQueue(OUTBOX_QUEUE, null);
        }
    }

    /** The run. */
    void run() {
        for (int i = 0; i < INSTANCES; i++) {
            start(i);
        }
        SimLoop.Owner world = broker.self;
        int messages = 12 + loop.random.nextInt(20);
        for (int i = 0; i < messages; i++) {
            double kind = loop.random.nextDouble();
            String id = kind < 0.06 ? POISON + i : kind < 0.12 ? KEYLESS + i : "m" + i;
            published.put(id, id.startsWith(POISON) ? POISON : id.startsWith(KEYLESS) ? KEYLESS : "normal");
            int copies = 1 + loop.random.nextInt(3);
            for (int c = 0; c < copies; c++) {
                String copy = Integer.toString(c);
                loop.schedule(world, TimeUnit.MILLISECONDS.toNanos(loop.random.nextLong(400)), 0, () -> publish(id, copy));
            }
        }
        operators.schedule();
        hostile.schedule();
        for (long t = 0; t < FAULTS_UNTIL_MS; t += TICK_MS) {
            loop.schedule(world, TimeUnit.MILLISECONDS.toNanos(t), 0, this::tick);
        }
        loop.runUntil(TimeUnit.MILLISECONDS.toNanos(FAULTS_UNTIL_MS));
        loop.trace.quiet = true;
        loop.trace.event("faults stop; settling");
        long deadline = loop.now() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        while (loop.now() < deadline && !settled()) {
            loop.runUntil(loop.now() + TimeUnit.MILLISECONDS.toNanos(50));
            checkBounds();
        }
        // One lease more: a claim left behind by a settled delivery would be gone by now.
        loop.runUntil(loop.now() + Mode.LEASE.toNanos() * 2);
        new Invariants(this).check();
    }

    /**
     * Starts the instance of {@code slot}. Each restart takes the signing key's rotation one step
     * further, as far as docs/connector.md's procedure allows: no instance signs with the new key before every
     * other one accepts it. Copies signed before a step are still in flight after it.
     */
    private void start(int slot) {
        int others = Integer.MAX_VALUE;
        for (int i = 0; i < INSTANCES; i++) {
            if (i != slot) {
                others = Math.min(others, rotation[i]);
            }
        }
        int step = instances[slot] == null ? 0 : Math.max(rotation[slot], Math.min(2, others + 1));
        if (step != rotation[slot]) {
            loop.trace.event("i" + slot + " restarts at step " + step + " of the signing key's rotation");
        }
        rotation[slot] = step;
        instances[slot] = new SimInstance(this, slot, "i" + slot + "." + incarnations++, step);
        stops.started(instances[slot], slot);
        operators.started(instances[slot]);
    }

    /** An instance died: its process manager starts it again a little later. */
    void restartLater(int slot) {
        reads.crashed(instances[slot].owner);
        loop.schedule(broker.self, TimeUnit.MILLISECONDS.toNanos(50 + loop.random.nextLong(400)), 0, () -> start(slot));
    }

    /** Publishes copy {@code copy} of {@code id}; the copy's number travels in a header retry copies keep. */
    private void publish(String id, String copy) {
        if (jms != null) {
            jms.send(id, copy, !id.startsWith(KEYLESS));
            return;
        }
        AMQP.BasicProperties.Builder props = new AMQP.BasicProperties.Builder().deliveryMode(2)
                .headers(hostile.headers(id, copy));
        if (!id.startsWith(KEYLESS)) {
            props.messageId(id);
        }
        List<SimBroker.Queue> to = broker.route(EXCHANGE, "order.placed");
        if (to == null || to.isEmpty()) {
            // Not declared yet: the publisher tries again shortly (a real one would get a 404 or a return).
            loop.schedule(broker.self, TimeUnit.MILLISECONDS.toNanos(20), 0, () -> publish(id, copy));
            return;
        }
        loop.trace.event("publisher -> " + id);
        for (SimBroker.Queue q : to) {
            broker.enqueue(q, broker.newMessage(EXCHANGE, "order.placed", props.build(), (id + ":body").getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** Every few milliseconds while faults are on: maybe crash or stop an instance (restarted a little later). */
    private void tick() {
        checkBounds();
        backend.tick();
        for (int i = 0; i < INSTANCES; i++) {
            SimInstance in = instances[i];
            if (in.alive() && loop.trace.fault(loop.chance(mode.crashChance()), "crash " + in.name)) {
                in.crash();
            } else if (in.alive() && !in.stopping() && loop.trace.fault(loop.chance(mode.stopChance()), "stop " + in.name + " gracefully")) {
                in.stop();
            } else {
                stops.tick(in);
            }
        }
    }

    /** Internal queues hold only what is not settled (bounded by the prefetch of each channel generation). */
    private void checkBounds() {
        for (SimInstance in : instances) {
            if (in == null || !in.alive() || in.connector() == null) {
                continue;
            }
            int line = in.connector().claimAheadLine();
            int unsettled = in.connector().unsettled();
            if (line > unsettled) {
                loop.trace.violation(in.name + ": the claim-ahead line keeps settled deliveries (line " + line
                        + ", unsettled " + unsettled + ", prefetch " + in.connector().prefetch() + ")");
            }
        }
    }

    private boolean settled() {
        for (SimInstance in : instances) {
            if (in.alive() && !AtRest.holdsNothing(in)) {
                return false;
            }
        }
        if (jms != null && !jms.settled()) {
            return false;
        }
        for (SimBroker.Queue q : broker.queues.values()) {
            if (drains(q) && (!q.ready.isEmpty() || q.outstanding() > 0)) {
                return false;
            }
        }
        return (outbox == null || outbox.settled()) && operators.settled();
    }

    /** Whether {@code q} is consumed, and so empty once the world settled (not dead letters, not the outbox's). */
    static boolean drains(SimBroker.Queue q) {
        return !q.name.endsWith(".dlq") && !q.name.equals(OUTBOX_QUEUE);
    }

    String logicalId(String messageId, String body) {
        return messageId != null ? messageId : body.substring(0, body.indexOf(':'));
    }

    /**
     * The handler saw attempt {@code attempt} of one published copy. Only failures count (docs/connector.md:
     * BUSY and RETRY never spend attempts), and returns the connector did not make (its channel
     * closed, its instance died): the attempt is at most one more than those.
     */
    void attemptSeen(String chain, int attempt) {
        int allowed = 1 + failures.getOrDefault(chain, 0) + broker.returnsNotByConnector.getOrDefault(chain, 0);
        if (attempt > allowed) {
            loop.trace.violation(chain + ": attempt " + attempt + " after " + failures.getOrDefault(chain, 0)
                    + " failures and " + broker.returnsNotByConnector.getOrDefault(chain, 0) + " returns by a closed channel");
        }
    }

    /** {@return the handler failures of {@code chain} so far} */
    int failures(String chain) {
        return failures.getOrDefault(chain, 0);
    }

    /** A delivery of {@code chain} failed (nacked as FAILED): one attempt spent. */
    void attemptFailed(String chain) {
        failures.merge(chain, 1, Integer::sum);
    }

    /** Which published copy a message is, whatever copies the connector made of it since. */
    String chain(String messageId, byte[] body, Map<String, Object> headers) {
        Object copy = headers == null ? null : headers.get(COPY_HEADER);
        return logicalId(messageId, new String(body, StandardCharsets.UTF_8)) + "#" + copy;
    }

    /** A window opened at the store for {@code keys}: resolved to their messages at the end. */
    void storeWindow(List<String> keys, String why) {
        keys.forEach(k -> storeFaulted.putIfAbsent(k, why));
    }

    private void windowOpened(String id, String why) {
        windows.putIfAbsent(id, why);
    }

    /** The run's store dropped (its database, if any). */
    void close() {
        backend.close();
    }

    /** The run's clock, on virtual time. */
    Clock clock() {
        return clock(loop::now);
    }

    /** A clock reading {@code nanos} of virtual time. */
    static Clock clock(LongSupplier nanos) {
        return new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochMilli(1_700_000_000_000L + TimeUnit.NANOSECONDS.toMillis(nanos.getAsLong()));
            }
        };
    }

    List<SimInstance> live() {
        List<SimInstance> live = new ArrayList<>();
        for (SimInstance in : instances) {
            if (in.alive()) {
                live.add(in);
            }
        }
        return live;
    }
}
