package dev.onceonly.simulation;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.Decision;
import dev.onceonly.internal.engine.GuardEngine;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.jms.JmsMessageView;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import dev.onceonly.internal.rabbitmq.SimConnector;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.internal.support.CurrentKey;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One application instance: the real engine and the real incoming channel on the simulation's
 * threads, store connection, database and broker, and the consumer method the application wrote.
 * A crash loses everything in it; a restart builds a new one under a new owner.
 */
final class SimInstance {

    /** Not worth retrying (the consumer's {@code no-retry-for}): the message is dead-lettered at once. */
    static final class PoisonException extends RuntimeException {
        PoisonException() {
            super("poison message (simulated)", null, false, false);
        }
    }

    /** Worth retrying. */
    static final class TransientException extends RuntimeException {
        TransientException() {
            super("transient failure (simulated)", null, false, false);
        }
    }

    private final World world;
    private final int slot;
    final String name;
    final SimLoop.Owner owner;
    private final SimExecutor exec;
    private final GuardEngine engine;
    /** The RabbitMQ connector's channel; {@code null} in JMS modes. */
    private final SimConnector connector;
    /** The message-driven bean's container; {@code null} unless in a JMS mode. */
    private final SimJmsListener jms;
    private final Handover handover = new Handover();
    /** Derives the store keys of a batch's messages, as the engine does ({@code sim:} prefix). */
    private final KeyDeriver keys = new KeyDeriver("sim:");
    private final ConsumerSettings settings;
    /** The outbox, in outbox modes; null otherwise. */
    private final SimOutboxSide outbox;
    private volatile Subscription subscription;
    private boolean stopping;

    /** @param rotation the step of the signing key's rotation this instance was started with ({@link Mode#channelAttributes}) */
    SimInstance(World world, int slot, String name, int rotation) {
        this.world = world;
        this.slot = slot;
        this.name = name;
        this.owner = new SimLoop.Owner(name);
        this.exec = new SimExecutor(world.loop, owner);
        this.settings = world.operators.consumerSettings();
        SimStore store = new SimStore(() -> world.store, world.loop, owner, world.mode.storeFaults(), world.keysSeen, world::storeWindow);
        world.stores.add(store);
        jms = world.jms != null ? new SimJmsListener(this, world, store) : null;
        engine = new GuardEngine(store, jms != null ? jms.joining() : transactions(store),
                world.mode.ledger() ? world.db.ledger(owner) : null, exec, event -> world.loop.trace.event(name + " " + event.outcome() + " " + event.keyDigest() + " " + event.reason()), new KeyDeriver("sim:"),
                world.loop::now);
        outbox = world.mode.outbox() ? new SimOutboxSide(world, owner, exec, world.db.transactions(owner, this::crash, store), name) : null;
        connector = jms != null ? null : SimConnector.start(world.mode.channelAttributes(rotation), exec,
                (channel, role) -> world.reads.connect(exec, name + ":" + role), world.loop::now,
                world.stops.instanceClock(), world.loop.random::nextDouble, handover, new Consumer());
    }

    /** The transactions of this instance's guarded calls: the database's, writing stored results after the commit where the mode keeps them beside the claims. */
    private TransactionRunner transactions(SimStore store) {
        TransactionRunner transactions = world.db.transactions(owner, this::crash, store);
        return world.results != null ? world.results.transactions(transactions) : transactions;
    }

    SimConnector connector() {
        return connector;
    }

    SimExecutor exec() {
        return exec;
    }

    GuardEngine engine() {
        return engine;
    }

    ConsumerSettings settings() {
        return settings;
    }

    /** {@return deliveries in progress: unsettled by the connector, or in a listener's transaction} */
    int unsettled() {
        return jms != null ? jms.inProgress() : connector.unsettled();
    }

    /** The hand-over between the channel and the consumer method. */
    Handover handover() {
        return handover;
    }

    /** {@return the message-driven bean's container, or null (not a JMS mode)} */
    SimJmsListener jmsListener() {
        return jms;
    }

    /** {@return this instance's outbox and relay, or null (not an outbox mode)} */
    SimOutboxSide outbox() {
        return outbox;
    }

    boolean alive() {
        return !owner.dead;
    }

    /**
     * After a guard returned: an instance that died meanwhile goes no further. The guard takes an
     * {@code Error} of the handler as its failure (a decision, not a throw), the simulated crash
     * among them; in life nothing of a dead process runs on to hand that decision to its deliveries.
     *
     * @throws SimLoop.Crash when this instance died
     */
    void goOnOnlyIfAlive() {
        if (owner.dead) {
            throw new SimLoop.Crash(owner);
        }
    }

    boolean stopping() {
        return stopping;
    }

    /**
     * A graceful stop, as the server does it: the channel stops consuming and gives back what it
     * holds, waits up to the drain timeout for the deliveries in progress, gives back the rest and
     * closes; then the process ends (what still runs is killed) and is started again.
     */
    void stop() {
        stopping = true;
        world.loop.trace.event(name + " STOPPING");
        if (jms != null) {
            jms.stopConsuming();
        } else {
            connector.stopConsuming();
        }
        awaitDrain(world.loop.now() + Mode.DRAIN.toNanos());
    }

    private void awaitDrain(long deadline) {
        if (unsettled() > 0 && world.loop.now() < deadline) {
            world.loop.schedule(owner, TimeUnit.MILLISECONDS.toNanos(10), 0, () -> awaitDrain(deadline));
            return;
        }
        if (connector != null) {
            world.amqp.drainTimedOut(owner);
            connector.drainAndClose();
        }
        crash(); // a listener's transactions still open roll back, and the provider takes their messages back
    }

    /** {@code kill -9}: memory, threads and connections gone; the broker takes back what was unacked. */
    void crash() {
        if (owner.dead) {
            return;
        }
        world.loop.trace.event(name + (stopping ? " STOPPED (what still ran is killed)" : " CRASHED"));
        owner.dead = true;
        world.loop.dropAll(owner);
        world.amqp.crashed(owner);
        world.db.crashed(owner);
        if (world.jms != null) {
            world.jms.crashed(owner);
        }
        world.restartLater(slot);
    }

    /** Reactive Messaging's side: requests, invokes the consumer method on a worker, acks or nacks. */
    private final class Consumer implements Subscriber<Message<?>> {
        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            s.request(world.mode.requests());
        }

        @Override
        public void onNext(Message<?> m) {
            exec.execute(() -> {
                invoke(m);
                subscription.request(1);
            });
        }

        @Override
        public void onError(Throwable t) {
            world.loop.trace.violation(name + ": the channel signalled an error: " + t);
        }

        @Override
        public void onComplete() {
        }
    }

    /**
     * What the interceptor does for an {@code @Incoming} method: the delivery posted under this
     * payload, the guard, a refusal of this delivery returned quietly (the connector settles it
     * from the decision), anything else thrown and nacked by Reactive Messaging.
     */
    private void invoke(Message<?> m) {
        if (world.mode.batch() > 0) {
            invokeBatch(m);
            return;
        }
        Dispatch d = handover.take(m.getPayload());
        if (d == null) {
            world.loop.trace.violation(name + ": no delivery posted for the payload handed over");
            return;
        }
        GuardEvent handed = null;
        try {
            if (world.mode.guarded()) {
                Decision<Object> decision = engine.guard(settings, d, null,
                        world.results != null ? world.results.keeping(() -> work(d)) : () -> work(d));
                goOnOnlyIfAlive();
                if (world.results != null && decision.outcome() == Outcome.DUPLICATE) {
                    world.results.duplicate(keys.derive(settings, d.message(), null).storeKey());
                }
                if (!decision.pending()) {
                    handed = decision.event();
                    d.decided(handed);
                }
                if (decision.refused()) {
                    world.settlements.decided(this, d, handed, null, null);
                    if (d.settlesFromDecision()) {
                        m.ack();
                    } else {
                        m.nack(decision.refusal());
                    }
                    return;
                }
                decision.resultOrThrow();
            } else {
                work(d);
            }
        } catch (SimLoop.Crash c) {
            throw c;
        } catch (Exception | Error e) {
            world.attemptFailed(world.chain(d.message().messageId(), d.message().body(), d.message().headers()));
            world.settlements.decided(this, d, handed, null, e);
            m.nack(e);
            return;
        }
        world.settlements.decided(this, d, handed, null, null);
        m.ack();
    }

    /**
     * What the interceptor does for an {@code @Incoming} method taking a list: the deliveries posted
     * under this list, the guard of each, each decision handed to its own delivery, and the batch
     * acked (each delivery settled from its own decision); unguarded, a failure nacks the batch.
     */
    private void invokeBatch(Message<?> m) {
        List<? extends Dispatch> batch = handover.takeBatch(m.getPayload());
        if (batch == null) {
            world.loop.trace.violation(name + ": no batch posted for the list handed over");
            return;
        }
        try {
            if (world.mode.guarded()) {
                List<Decision<Object>> decisions = engine.guardAll(settings, batch, positions -> {
                    for (int p : positions) {
                        work(batch.get(p));
                    }
                    return null;
                });
                goOnOnlyIfAlive();
                for (int i = 0; i < batch.size(); i++) {
                    Decision<Object> decision = decisions.get(i);
                    Dispatch d = batch.get(i);
                    if (!decision.pending()) {
                        d.decided(decision.event(), decision.failure());
                    }
                    world.settlements.decided(this, d, decision.pending() ? null : decision.event(), decision.failure(), null);
                    if (!decision.refused() && decision.outcome() == Outcome.FAILED) {
                        world.attemptFailed(world.chain(d.message().messageId(), d.message().body(), d.message().headers()));
                    }
                }
            } else {
                for (Dispatch d : batch) {
                    work(d);
                }
                batch.forEach(d -> world.settlements.decided(this, d, null, null, null));
            }
        } catch (SimLoop.Crash c) {
            throw c;
        } catch (Exception | Error e) {
            for (Dispatch d : batch) {
                world.attemptFailed(world.chain(d.message().messageId(), d.message().body(), d.message().headers()));
                world.settlements.decided(this, d, null, null, e);
            }
            m.nack(e);
            return;
        }
        m.ack();
    }

    /** The business method: takes time, may fail, and writes its effect in the transaction. */
    Object work(Dispatch d) {
        String body = new String(d.message().body(), StandardCharsets.UTF_8);
        // A JMSMessageID names one send, not the message: the body does.
        String id = world.logicalId(d.message() instanceof JmsMessageView ? null : d.message().messageId(), body);
        if (d.message() instanceof IncomingRabbitMetadata meta) {
            world.attemptSeen(world.chain(d.message().messageId(), d.message().body(), d.message().headers()), meta.attempt());
        }
        SimLoop loop = world.loop;
        world.loop.trace.event(name + " handler runs " + id);
        loop.pause(owner, TimeUnit.MICROSECONDS.toNanos(100 + loop.random.nextLong(3_000)));
        world.stops.pauseInHandler(this, id);
        if (body.startsWith(World.POISON)) {
            throw new PoisonException();
        }
        if (loop.trace.fault(world.operators.handlerFails(id), name + " handler of " + id + " fails")) {
            throw new TransientException();
        }
        if (world.mode.guarded()) {
            // The store key, prefix included: the running handler's, or in a batch each message's own.
            String storeKey = CurrentKey.get() != null ? CurrentKey.get() : keys.derive(settings, d.message(), null).storeKey();
            world.keyOf.put(storeKey, id);
            if (outbox != null) {
                outbox.send(id);
            }
            world.db.current().keys.add(storeKey);
            world.db.current().effects.add(id);
        } else {
            world.db.effects.merge(id, 1, Integer::sum);
        }
        return null;
    }
}
