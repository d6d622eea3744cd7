package dev.onceonly.simulation;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.engine.Decision;
import dev.onceonly.internal.jms.JmsMessageView;
import dev.onceonly.internal.jms.JmsRefusals;
import dev.onceonly.internal.jms.SimJmsRefusals;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.TransactionRunner;
import jakarta.jms.TextMessage;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * One instance's message-driven bean on {@link SimJms}: a few listener sessions, each delivery run
 * in a container-managed transaction (on {@link SimDatabase}: the receipt, the ledger row and the
 * business writes commit together), and inside it {@code onMessage} as the interceptor runs it for
 * a JMS listener: the real {@link JmsMessageView}, the real engine joining the container's
 * transaction (its completion told as that transaction ends), and a refusal or a failure settled by
 * the real {@link JmsRefusals} (BUSY and RETRY held, then the transaction marked rollback-only; a
 * handler failure marked so too; CONFLICT and REJECTED moved to the dead-letter queue in the
 * transaction; anything else thrown). A throw, or a transaction marked rollback-only, rolls it back
 * and the provider redelivers.
 */
final class SimJmsListener {

    /** Listener sessions per instance (the bean's pool). */
    static final int SESSIONS = 3;
    /** {@code onceonly.jms.retry-delay}: how long a BUSY or RETRY delivery is held before its rollback. */
    static final Duration RETRY_DELAY = Duration.ofMillis(150);

    private final SimInstance instance;
    private final World world;
    private final JmsRefusals refusals;
    /** The container's transactions in progress on this instance, with what the engine joined to each. */
    private final Map<SimDatabase.Tx, Receipt> receipts = new HashMap<>();
    private final TransactionRunner containerTransactions;
    private int busy;
    private boolean stopped;

    SimJmsListener(SimInstance instance, World world, SimStore store) {
        this.instance = instance;
        this.world = world;
        SimLoop loop = world.loop;
        this.containerTransactions = world.db.transactions(instance.owner, instance::crash, store);
        this.refusals = SimJmsRefusals.create(RETRY_DELAY,
                SimJmsApi.factory(() -> loop.trace.fault(loop.chance(0.05), instance.name + ": the send to the dead-letter queue fails"),
                        letter -> world.db.current().onCommit.add(() -> world.jms.deadLettered((TextMessage) letter))),
                world.jms.deadLetterQueue, new JmsRefusals.ListenerTransaction() {
                    @Override
                    public boolean rollbackOnly() {
                        return receipts.get(world.db.current()).rollbackOnly;
                    }

                    @Override
                    public boolean markRollbackOnly() {
                        Receipt r = receipts.get(world.db.current());
                        r.rollbackOnly = true;
                        r.why = "marked rollback-only by onMessage's guard";
                        return true;
                    }
                }, delay -> receipts.get(world.db.current()).held = delay);
        world.jms.register(this);
    }

    SimLoop.Owner owner() {
        return instance.owner;
    }

    boolean hasFreeSession() {
        return !stopped && instance.alive() && busy < SESSIONS;
    }

    /** {@return deliveries whose transaction has not ended} */
    int inProgress() {
        return busy;
    }

    /** A graceful stop: no new deliveries. */
    void stopConsuming() {
        stopped = true;
    }

    /**
     * The engine's transactions: it joins the container's (JTA {@code REQUIRED}), and is told how
     * that ended when the container ends it; work that throws marks it rollback-only.
     */
    TransactionRunner joining() {
        return new TransactionRunner() {
            @Override
            public <T> T run(Work<T> work, Completion completion) throws Exception {
                Receipt r = receipts.get(world.db.current());
                r.joined = completion;
                try {
                    return work.call();
                } catch (SimLoop.Crash c) {
                    throw c;
                } catch (Exception | Error e) {
                    r.rollbackOnly = true;
                    throw e;
                }
            }
        };
    }

    void deliver(SimJms.Delivery d) {
        busy++;
        instance.exec().execute(() -> {
            try {
                receive(d);
            } finally {
                busy--;
            }
        });
    }

    /** The container: begins the transaction, receives the message in it, calls the bean, ends it. */
    private void receive(SimJms.Delivery d) {
        Receipt receipt = new Receipt(d);
        try {
            containerTransactions.run(() -> {
                SimDatabase.Tx tx = world.db.current();
                receipts.put(tx, receipt);
                receipt.tx = tx;
                tx.onCommit.add(() -> world.jms.consumed(d));
                try {
                    onMessage(d);
                } catch (Exception | Error e) {
                    receipt.why = e.toString();
                    throw e;
                }
                return null;
            }, receipt);
        } catch (SimLoop.Crash c) {
            throw c;
        } catch (Exception | Error e) {
            world.loop.trace.event(instance.name + " rolled back " + d.msg().jmsId + " (delivery " + d.count() + "): " + e);
        } finally {
            receipts.remove(receipt.tx);
        }
    }

    /** {@code onMessage} with the interceptor around it, as for a guarded JMS listener. */
    private void onMessage(SimJms.Delivery d) throws Exception {
        JmsMessageView view = JmsMessageView.of(world.jms.received(d));
        Dispatch dispatch = Dispatch.of(view);
        Decision<Object> decision = instance.engine().guard(instance.settings(), dispatch, null, () -> {
            // Noted as the handler starts: an instance that dies right after its commit never decides.
            world.jms.processedOn.computeIfAbsent(d.msg().logicalId, k -> new java.util.ArrayList<>()).add(instance.owner);
            return instance.work(dispatch);
        });
        instance.goOnOnlyIfAlive();
        // Pending or final: a refusal or a ledger DUPLICATE in the listener's transaction is known at return.
        GuardEvent event = decision.event();
        if (event.outcome() == Outcome.BUSY || event.outcome() == Outcome.RETRY) {
            d.msg().heldRounds++;
        }
        d.msg().keyDigest = event.keyDigest();
        d.msg().decisions.put(d.count(), event.outcome() == Outcome.DUPLICATE && event.layer() == Layer.LEDGER
                ? SimJms.LEDGER_DUPLICATE : event.outcome().name());
        if (decision.refused()) {
            refusals.settle(view, decision.refusal());
        } else if (event.outcome() == Outcome.FAILED) {
            refusals.failed(view, event, decision.failure());
        } else {
            decision.resultOrThrow();
        }
    }

    /**
     * The container's side of one delivery's transaction: the receipt in it, and the engine's
     * completion when the engine joined it. On a rollback the provider takes the message back
     * first (a resource of the transaction), then the synchronizations run: so a provider that
     * redelivers at once may hand it on before the engine's completion released or marked the key.
     */
    private final class Receipt implements TransactionRunner.Completion {
        final SimJms.Delivery delivery;
        SimDatabase.Tx tx;
        TransactionRunner.Completion joined;
        boolean rollbackOnly;
        /**
         * How long {@code JmsRefusals} held the delivery before its rollback. A held thread is a
         * pause of the instance; but the loop's nested pauses take no time past a depth, and a
         * hold is long, so the hold is spent by the provider instead: the message comes back that
         * much later, as it would after a held rollback.
         */
        Duration held = Duration.ZERO;
        String why = "the transaction could not commit";

        Receipt(SimJms.Delivery delivery) {
            this.delivery = delivery;
        }

        @Override
        public boolean mayCommit() {
            return !rollbackOnly && (joined == null || joined.mayCommit());
        }

        @Override
        public void completed(boolean committed) {
            if (!committed) {
                world.jms.rolledBack(delivery, why, held);
            }
            if (joined != null) {
                joined.completed(committed);
            }
        }
    }
}
