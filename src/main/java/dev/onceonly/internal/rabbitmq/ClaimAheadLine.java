package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.ClaimAheadSlot;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The deliveries of one consuming channel received and not yet settled, in the order they arrived
 * ({@code claim-ahead}): buffered ones, and those handed to the application (Reactive Messaging may
 * take several and queue them itself). When the guard asks for the deliveries behind one
 * ({@link ClaimAheadSlot#behind}), it gets up to {@code claim-ahead − 1} of them that hold no claim
 * yet, and claims their keys in the same round trip as that one's.
 */
final class ClaimAheadLine<D extends ClaimAheadLine.Member<D>> {

    /** What the line needs of a delivery in it. */
    interface Member<D extends Member<D>> {
        /** Joins {@code line} as its {@code sequence}-th delivery. */
        void joinLine(ClaimAheadLine<D> line, long sequence);

        long sequenceInLine();

        boolean isSettled();

        /** Whether its AMQP channel closed since it was received: the broker requeued it. */
        boolean isStale();

        /** {@return the claim taken ahead for it, or {@code null}, as {@link ClaimAheadSlot#held}} */
        ClaimAheadSlot.Claim held();
    }

    private final int claimAhead;
    private final ConcurrentLinkedQueue<D> line = new ConcurrentLinkedQueue<>();
    private final AtomicLong sequence = new AtomicLong();

    /** @param claimAhead how many deliveries one claim takes, the asking one included; at least 2 */
    ClaimAheadLine(int claimAhead) {
        this.claimAhead = claimAhead;
    }

    /** A delivery was received (it will be handed over in this order): it joins the line. */
    void received(D d) {
        d.joinLine(this, sequence.incrementAndGet());
        line.add(d);
        if (d.isSettled()) {
            line.remove(d); // settled while joining (a shutdown requeued it): it found nothing to leave yet
        }
    }

    /**
     * A settled delivery leaves the line. Every delivery is settled once,
     * whether the guard ever saw it or not (an unguarded consumer, a key-less message, a disabled
     * guard), so the line holds only deliveries not settled: at most the prefetch of each channel
     * generation whose deliveries are still unsettled.
     */
    void remove(D d) {
        line.remove(d);
    }

    /**
     * {@return the deliveries received after {@code d}, not settled, on the same AMQP channel
     * generation, holding no claim; at most {@code claim-ahead − 1}}
     */
    List<D> behind(D d) {
        List<D> behind = new ArrayList<>(claimAhead - 1);
        for (D e : line) {
            if (behind.size() == claimAhead - 1) {
                break;
            }
            if (e.sequenceInLine() > d.sequenceInLine() && !e.isSettled() && e.held() == null && !e.isStale()) {
                behind.add(e);
            }
        }
        return behind;
    }

    /** {@return the deliveries in the line: received and not settled} */
    int length() {
        return line.size();
    }
}
