package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.Handover;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The Reactive Streams side of one incoming channel: buffers the deliveries received (at most
 * prefetch: the broker sends no more) and hands them to its one subscriber only on demand, one at a
 * time. Before a delivery is handed over, it is posted on the {@link Handover} under its payload
 * object, so the guard of the method invoked with that payload finds it. With {@code batch=true},
 * each item handed over is an {@link IncomingRabbitBatch} of up to {@code batch-size} deliveries
 * (fewer once the first has waited {@code batch-linger}), posted under the list of their payloads.
 */
final class DeliveryEmitter implements Publisher<Message<?>> {

    /** What the emitter needs of its channel. */
    interface Hooks {
        /** Whether the channel is stopping: nothing more is handed over. */
        boolean stopping();

        /** The subscriber cancelled: nobody will process further deliveries here. */
        void cancelled();

        /** A delivery whose AMQP channel closed since it was received: the broker requeued it. */
        void forget(Delivery d);

        /** The subscriber threw instead of taking the delivery (Reactive Messaging handles method failures itself). */
        void broken(Delivery d, RuntimeException e);
    }

    private final String channel;
    private final Handover handover;
    private final Executor executor;
    /** With claim-ahead (at least 2): the deliveries received and not settled, whose keys the guard claims together; else null. */
    private final ClaimAheadLine<Delivery> aheadLine;
    private final Hooks hooks;
    /** The batches handed over ({@code batch=true}), or {@code null}: one delivery at a time. */
    private final IncomingSettings.Batching batching;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier nanoClock;
    /** {@link #lingerFrom} while no partial batch waits. */
    private static final long NOT_LINGERING = Long.MIN_VALUE;
    /** When the partial batch now waiting began to linger; read and written by the emitting thread only. */
    private long lingerFrom = NOT_LINGERING;
    /** Whether a drain is scheduled for when the lingering batch is due. */
    private final AtomicBoolean lingerScheduled = new AtomicBoolean();
    private final Queue<IncomingRabbitMessage<Object>> buffered = new ConcurrentLinkedQueue<>();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicInteger emitting = new AtomicInteger();
    private volatile Subscriber<? super Message<?>> subscriber;

    DeliveryEmitter(String channel, Handover handover, RabbitResources resources, int claimAhead,
                    IncomingSettings.Batching batching, Hooks hooks) {
        this.channel = channel;
        this.handover = handover;
        this.executor = resources.executor();
        this.scheduler = resources.scheduler();
        this.nanoClock = resources.nanoClock();
        this.batching = batching;
        this.aheadLine = claimAhead > 1 ? new ClaimAheadLine<>(claimAhead) : null;
        this.hooks = hooks;
    }

    @Override
    public void subscribe(Subscriber<? super Message<?>> s) {
        synchronized (this) {
            if (subscriber != null) {
                s.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                    }

                    @Override
                    public void cancel() {
                    }
                });
                s.onError(new IllegalStateException("channel '" + channel + "' accepts a single subscriber"));
                return;
            }
            subscriber = s;
        }
        s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                if (n <= 0) {
                    s.onError(new IllegalArgumentException("request must be positive (rule 3.9)"));
                    return;
                }
                requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
                emit();
            }

            @Override
            public void cancel() {
                // Nobody will process further deliveries here: let other consumers have them.
                hooks.cancelled();
            }
        });
    }

    /** A delivery received: buffered until there is demand (joining the claim-ahead line first). */
    void offer(IncomingRabbitMessage<Object> m) {
        Delivery d = m.delivery();
        if (aheadLine != null) {
            aheadLine.received(d);
        }
        buffered.offer(m);
        if (aheadLine == null && batching == null) {
            emit();
        } else {
            // Handed over on another thread, so that this one (amqp-client's dispatch of this channel,
            // one delivery at a time) goes on receiving while the application works: the deliveries
            // that arrive meanwhile wait in the buffer, where the guard can claim their keys with the
            // key of the one it is guarding (claim-ahead), or where the next batch gathers. Inline,
            // each delivery would be handled before the next one was even received.
            drainElsewhere();
        }
    }

    /** Starts the emitting loop on the executor unless a thread runs it; that one then loops again. */
    private void drainElsewhere() {
        if (emitting.getAndIncrement() == 0) {
            try {
                executor.execute(this::drain);
            } catch (RejectedExecutionException e) {
                drain(); // stopping: the loop sees it and hands nothing over
            }
        }
    }

    /** Emits buffered deliveries while there is demand; one thread at a time, never re-entrant. */
    private void emit() {
        if (emitting.getAndIncrement() != 0) {
            return;
        }
        drain();
    }

    /** The emitting loop, entered by the one thread that took {@link #emitting} from zero. */
    private void drain() {
        int missed = 1;
        do {
            long wanted = requested.get();
            long sent = 0;
            while (sent != wanted && !hooks.stopping()) {
                Message<?> m = batching == null ? nextOne() : nextBatch();
                if (m == null) {
                    break;
                }
                try {
                    subscriber.onNext(m);
                } catch (RuntimeException e) {
                    // Reactive Messaging handles method failures itself; this is a broken subscriber.
                    if (m instanceof IncomingRabbitBatch b) {
                        b.messages().forEach(one -> hooks.broken(one.delivery(), e));
                    } else {
                        hooks.broken(((IncomingRabbitMessage<?>) m).delivery(), e);
                    }
                }
                sent++;
            }
            if (sent != 0 && wanted != Long.MAX_VALUE) {
                requested.addAndGet(-sent);
            }
            missed = emitting.addAndGet(-missed);
        } while (missed != 0);
    }

    /** {@return the next delivery to hand over, posted on the handover; {@code null} when none is buffered} */
    private IncomingRabbitMessage<Object> nextOne() {
        IncomingRabbitMessage<Object> m;
        while ((m = buffered.poll()) != null) {
            Delivery d = m.delivery();
            if (!takeable(d)) {
                continue;
            }
            // Withdrawn when the delivery is settled, so the board holds only deliveries in flight;
            // one settled meanwhile (requeued at the drain timeout) withdrew before this post.
            handover.post(d.payload, d);
            if (d.isSettled()) {
                handover.withdraw(d.payload);
                continue;
            }
            return m;
        }
        return null;
    }

    /**
     * {@return the next batch to hand over, posted on the handover; {@code null} when nothing is
     * buffered, or a partial batch lingers (a drain is then scheduled for when it is due)}
     */
    private IncomingRabbitBatch nextBatch() {
        while (!buffered.isEmpty()) {
            if (buffered.size() < batching.size()) {
                long now = nanoClock.getAsLong();
                if (lingerFrom == NOT_LINGERING) {
                    lingerFrom = now;
                }
                long left = lingerFrom + batching.linger().toNanos() - now;
                if (left > 0) {
                    drainAfter(left);
                    return null;
                }
            }
            lingerFrom = NOT_LINGERING;
            List<IncomingRabbitMessage<Object>> taken = new ArrayList<>(batching.size());
            List<Object> payloads = new ArrayList<>(batching.size());
            List<Delivery> deliveries = new ArrayList<>(batching.size());
            IncomingRabbitMessage<Object> m;
            while (taken.size() < batching.size() && (m = buffered.poll()) != null) {
                Delivery d = m.delivery();
                // One settled meanwhile (requeued at the drain timeout) ignores the ack of its batch.
                if (takeable(d) && !d.isSettled()) {
                    taken.add(m);
                    payloads.add(d.payload);
                    deliveries.add(d);
                }
            }
            if (!taken.isEmpty()) {
                // Withdrawn when the batch is acked or nacked (a guarded method takes it before).
                handover.postBatch(payloads, deliveries);
                return new IncomingRabbitBatch(payloads, taken, handover);
            }
        }
        lingerFrom = NOT_LINGERING;
        return null;
    }

    /** Whether a buffered delivery may be handed over: not requeued by the broker, not being given back. */
    private boolean takeable(Delivery d) {
        if (d.isStale()) {
            hooks.forget(d); // the broker requeued it when its channel closed: someone gets it again
            return false;
        }
        return d.handOver(); // false: a stop is giving it back
    }

    /** Drains again once a lingering batch is due; once, however often asked meanwhile. */
    private void drainAfter(long nanos) {
        if (lingerScheduled.compareAndSet(false, true)) {
            try {
                scheduler.schedule(() -> {
                    lingerScheduled.set(false);
                    drainElsewhere();
                }, nanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                lingerScheduled.set(false); // stopping: what is buffered is given back
            }
        }
    }

    /** Drops what is buffered: at a stop, the channel gives those deliveries back itself. */
    void clear() {
        buffered.clear();
    }

    /** {@return deliveries in the claim-ahead line; 0 without claim-ahead} */
    int claimAheadLineLength() {
        return aheadLine == null ? 0 : aheadLine.length();
    }
}
