package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.Handover;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Reactive Streams side of one incoming channel: buffers the deliveries received (at most
 * prefetch: the broker sends no more) and hands them to its one subscriber only on demand, one at a
 * time. Before a delivery is handed over, it is posted on the {@link Handover} under its payload
 * object, so the guard of the method invoked with that payload finds it.
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
    private final Queue<IncomingRabbitMessage<Object>> buffered = new ConcurrentLinkedQueue<>();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicInteger emitting = new AtomicInteger();
    private volatile Subscriber<? super Message<?>> subscriber;

    DeliveryEmitter(String channel, Handover handover, Executor executor, int claimAhead, Hooks hooks) {
        this.channel = channel;
        this.handover = handover;
        this.executor = executor;
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
        if (aheadLine == null) {
            emit();
        } else if (emitting.getAndIncrement() == 0) {
            // Handed over on another thread, so that this one (amqp-client's dispatch of this channel,
            // one delivery at a time) goes on receiving while the application works: the deliveries
            // that arrive meanwhile wait in the buffer, where the guard can claim their keys with the
            // key of the one it is guarding (claim-ahead). Inline, each delivery would be handled
            // before the next one was even received, and nothing would ever be behind it.
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
                IncomingRabbitMessage<Object> m = buffered.poll();
                if (m == null) {
                    break;
                }
                Delivery d = m.delivery();
                if (d.isStale()) {
                    hooks.forget(d); // the broker requeued it when its channel closed: someone gets it again
                    continue;
                }
                if (!d.handOver()) {
                    continue; // a stop is giving it back
                }
                // Withdrawn when the delivery is settled, so the board holds only deliveries in flight;
                // one settled meanwhile (requeued at the drain timeout) withdrew before this post.
                handover.post(d.payload, d);
                if (d.isSettled()) {
                    handover.withdraw(d.payload);
                    continue;
                }
                try {
                    subscriber.onNext(m);
                } catch (RuntimeException e) {
                    // Reactive Messaging handles method failures itself; this is a broken subscriber.
                    hooks.broken(d, e);
                }
                sent++;
            }
            if (sent != 0 && wanted != Long.MAX_VALUE) {
                requested.addAndGet(-sent);
            }
            missed = emitting.addAndGet(-missed);
        } while (missed != 0);
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
