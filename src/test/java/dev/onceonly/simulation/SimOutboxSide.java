package dev.onceonly.simulation;

import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.Outbox;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.outbox.OutboxRelay;
import dev.onceonly.internal.outbox.SimRelayState;
import dev.onceonly.internal.outbox.jpa.JtaOutbox;
import dev.onceonly.internal.rabbitmq.SimOutboxEndpoint;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.outbox.OutboxPublisher;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.spi.TransactionRunner;

import java.time.Duration;
import java.util.Map;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One instance's outbox: the real {@link JtaOutbox} on {@link SimOutbox} (through
 * {@link SimTransactionRegistry}), the real {@link OutboxRelay} with its sweep on the instance's
 * executor, and the real publisher ({@code OutboxEndpoint}) on the simulated broker. All of it dies
 * with the instance.
 *
 * <p>The relay waits for its confirms in real time ({@code SourceChains}); in the simulation nothing
 * answers while it waits, so the publisher waits here instead, on the virtual clock, until the
 * broker answered or the relay's wait is over ({@link SimOutbox.Relay#deadline}), and the relay's
 * own wait only has to end. Each publish is checked as it is made: its row is committed and locked
 * by the relay publishing it, and every earlier committed row of its source is done or was
 * confirmed by the broker (docs/outbox.md's order). Besides the broker's nacks and lost confirms
 * ({@link SimAmqp}), the broker sometimes closes the relay's channels right after a publish.
 */
final class SimOutboxSide {

    static final Duration CONFIRM_TIMEOUT = Duration.ofMillis(300);
    /** Sweeps often, rows soon, small batches (a source's rows split over batches), few refusals before parking. */
    private static final OutboxRelay.Settings SETTINGS = new OutboxRelay.Settings(Duration.ofMillis(200), Duration.ofMillis(300),
            2, 3, Duration.ofDays(1), Duration.ofMillis(1), Duration.ofMillis(10));

    private final World world;
    private final SimLoop.Owner owner;
    private final TransactionRunner transactions;
    private final Outbox outbox;
    private final String connection;
    private final OutboxRelay relay;

    SimOutboxSide(World world, SimLoop.Owner owner, SimExecutor exec, TransactionRunner transactions, String name) {
        this.world = world;
        this.owner = owner;
        this.transactions = transactions;
        this.connection = name + ":outbox";
        OutboxPublisher endpoint = SimOutboxEndpoint.start(exec, (channel, role) -> world.amqp.connect(exec, connection),
                world.loop::now, world.loop.random::nextDouble, CONFIRM_TIMEOUT);
        OutboxStore store = world.outbox.store(owner, transactions, world.mode.relayEarlyStopChance());
        this.relay = new OutboxRelay(store, new Checked(endpoint), SETTINGS, world.clock(), exec, exec, OutboxListener.NONE);
        this.outbox = new JtaOutbox(store, new SimTransactionRegistry(world.db),
                relay::committed, world.clock(), MessageTracing.NONE);
    }

    /** {@return what the relay still holds, by name: every one of them 0 once the world is at rest} */
    Map<String, Integer> held() {
        return SimRelayState.held(relay);
    }

    /**
     * The handler's sends for {@code id}, in its transaction: the same messages on every run (as
     * docs/outbox.md asks), one of them maybe from a {@code REQUIRES_NEW} transaction of its own.
     */
    void send(String id) {
        SimOutbox.Plan plan = world.outbox.plan(id, world.loop.random);
        SimDatabase.Tx own = world.db.current();
        List<String> ids = new ArrayList<>();
        for (int n = 1; n <= plan.sends(); n++) {
            OutboxMessage m = OutboxMessage.text("", World.OUTBOX_QUEUE, id + ":" + n);
            String sent = n == plan.nested() ? inNewTransaction(own, m) : send(m);
            if (ids.contains(sent)) {
                world.loop.trace.violation(owner + ": two sends of one run of " + id + " got the id " + sent);
            }
            ids.add(sent);
        }
    }

    private String inNewTransaction(SimDatabase.Tx own, OutboxMessage m) {
        try {
            return transactions.run(() -> {
                SimDatabase.Tx inner = world.db.current();
                world.outbox.sameRun(inner, own);
                try {
                    return send(m);
                } finally {
                    world.outbox.sameRun(inner, null);
                }
            }, committed -> { });
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A send the outbox refuses as a different message under its id: the handler sends the same on every run, so ids collided. */
    private String send(OutboxMessage m) {
        try {
            return outbox.send(m);
        } catch (OnceOnlyException e) {
            world.loop.trace.violation(owner + ": the outbox refused a send of " + new String(m.body()) + ": " + e.getMessage());
            throw e;
        }
    }

    /** The real publisher, waited for on the virtual clock, and each publish checked as it is made. */
    private final class Checked implements OutboxPublisher {
        private final OutboxPublisher endpoint;

        Checked(OutboxPublisher endpoint) {
            this.endpoint = endpoint;
        }

        @Override
        public CompletableFuture<Void> publish(OutboxRecord row) {
            if (owner.dead) {
                throw new SimLoop.Crash(owner);
            }
            SimOutbox.Relay relay = world.outbox.checkPublish(owner, row);
            // Recorded before the relay's own continuation runs: the next row of the source may be published from it.
            CompletableFuture<Void> confirm = endpoint.publish(row).whenComplete((ok, failure) -> {
                if (failure == null) {
                    world.outbox.confirmed.add(row.id());
                }
            });
            SimLoop loop = world.loop;
            if (loop.trace.fault(loop.chance(world.mode.brokerFaults().channelClose()), "broker closes " + connection + " channels")) {
                // Before the confirm, most likely: every publish awaiting one on the channel fails, the next opens another.
                loop.schedule(world.broker.self, TimeUnit.MICROSECONDS.toNanos(loop.random.nextLong(300)), 0,
                        () -> world.amqp.closeChannels(connection));
            }
            while (relay != null && !confirm.isDone() && loop.now() < relay.deadline()) {
                long before = loop.now();
                loop.pause(owner, TimeUnit.MICROSECONDS.toNanos(100));
                if (loop.now() == before) {
                    break; // nested too deep for time to pass: the relay's wait ends with what was answered
                }
            }
            return confirm;
        }

        @Override
        public boolean connected() {
            return endpoint.connected();
        }
    }
}
