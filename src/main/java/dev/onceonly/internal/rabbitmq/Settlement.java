package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.Handover;

import java.io.IOException;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The broker actions of one incoming channel's deliveries — ack, requeue, hold for a retry delay
 * — and the set of deliveries not yet settled. Every action goes through
 * {@link Delivery#claimSettlement()}, so each delivery is settled with the broker exactly once
 * (acking a delivery tag twice makes the broker close the channel), and leaves the
 * {@link Handover} with it.
 */
final class Settlement {

    private final Duration retryDelay;
    private final ScheduledExecutorService scheduler;
    private final Handover handover;
    private final Set<Delivery> unsettled = ConcurrentHashMap.newKeySet();
    /** How a waiting delivery goes back to the queue once the channel stops; {@code null} until then. */
    private volatile Consumer<Delivery> giveBack;

    Settlement(Duration retryDelay, ScheduledExecutorService scheduler, Handover handover) {
        this.retryDelay = retryDelay;
        this.scheduler = scheduler;
        this.handover = handover;
    }

    /** A delivery the broker handed over: unsettled until one of the actions below. */
    void track(Delivery d) {
        unsettled.add(d);
    }

    /** Acks, unless the delivery's channel closed meanwhile (the broker has it back). */
    void ack(Delivery d) {
        if (settle(d) && !d.isStale()) {
            try {
                d.channel.basicAck(d.deliveryTag, false);
            } catch (IOException | RuntimeException e) {
                // Channel closed meanwhile: the broker redelivers, and the guard sees a duplicate.
            }
        }
    }

    /** @return whether this call settled the delivery */
    boolean requeue(Delivery d) {
        if (!settle(d)) {
            return false;
        }
        if (!d.isStale()) {
            try {
                d.channel.basicNack(d.deliveryTag, false, true);
            } catch (IOException | RuntimeException e) {
                // Channel closed meanwhile: the broker requeued it already.
            }
        }
        return true;
    }

    /** A delivery of a closed channel: nothing to send, the broker has it back. */
    void forget(Delivery d) {
        settle(d);
    }

    /** Keeps the delivery (and its prefetch slot) for {@code delay}, then runs {@code then}. */
    void hold(Delivery d, Duration delay, Runnable then) {
        d.stage(Delivery.Stage.HELD);
        Consumer<Delivery> back = giveBack;
        if (back != null) {
            if (d.startReturning()) {
                back.accept(d); // shutting down: no point in waiting
            }
            return;
        }
        later(d, delay, then);
    }

    /**
     * Shutdown: a delivery whose give-back failed tries again after {@code delay}, until it is
     * settled or {@link #requeueAll} takes it at the drain timeout.
     */
    void giveBackLater(Delivery d, Duration delay, Runnable then) {
        later(d, delay, then);
    }

    private void later(Delivery d, Duration delay, Runnable then) {
        try {
            d.hold = scheduler.schedule(() -> {
                if (d.isStale()) {
                    forget(d); // the broker took it back meanwhile and redelivers it: a copy would start a second chain
                } else if (!d.isSettled()) {
                    then.run();
                }
            }, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            requeue(d);
        }
    }

    /** Keeps the delivery for the (fixed) retry delay, then requeues it. */
    void holdThenRequeue(Delivery d) {
        hold(d, retryDelay, () -> requeue(d));
    }

    /**
     * Shutdown, first step: from now on held deliveries go back at once, and those waiting (buffered
     * or held) go back now, each by {@code giveBack} (a requeue, or where a requeue would spend an
     * attempt, a copy); it must settle the delivery, or leave it to {@link #requeueAll}.
     *
     * @return how many were given back
     */
    int stopAndGiveBackWaiting(Consumer<Delivery> giveBack) {
        this.giveBack = giveBack;
        int given = 0;
        for (Delivery d : inOrder()) {
            if (d.startReturning()) {
                if (d.hold != null) {
                    d.hold.cancel(false); // goes back now: its timer must not send it a second time
                }
                giveBack.accept(d);
                given++;
            }
        }
        return given;
    }

    /** Shutdown, last step: requeues whatever is still unsettled. @return how many */
    int requeueAll() {
        int requeued = 0;
        for (Delivery d : inOrder()) {
            if (requeue(d)) {
                requeued++;
            }
        }
        return requeued;
    }

    int unsettledCount() {
        return unsettled.size();
    }

    boolean allSettled() {
        return unsettled.isEmpty();
    }

    /**
     * The unsettled deliveries in the order the broker delivered them: given back in that order,
     * they keep the queue's order as far as they can (and a set's order, by identity hash, would
     * differ from run to run).
     */
    private List<Delivery> inOrder() {
        return unsettled.stream().sorted(Comparator.comparingLong(d -> d.deliveryTag)).toList();
    }

    private boolean settle(Delivery d) {
        if (!d.claimSettlement()) {
            return false;
        }
        unsettled.remove(d);
        handover.withdraw(d.payload);
        d.settled();
        if (d.hold != null) {
            d.hold.cancel(false);
        }
        return true;
    }
}
