package dev.onceonly.rabbitmq;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The deliveries of one consuming channel received and not yet settled, in the order they arrived
 * ({@code claim-ahead}): buffered ones, and those handed to the application (Reactive Messaging may
 * take several and queue them itself). When the guard asks for the deliveries behind one
 * ({@link Delivery#claimAheadWith}), it gets up to {@code claim-ahead − 1} of them that hold no claim
 * yet, and claims their keys in the same round trip as that one's.
 */
final class ClaimAheadLine {

    private final int claimAhead;
    private final ConcurrentLinkedQueue<Delivery> line = new ConcurrentLinkedQueue<>();
    private final AtomicLong sequence = new AtomicLong();

    /** @param claimAhead how many deliveries one claim takes, the asking one included; at least 2 */
    ClaimAheadLine(int claimAhead) {
        this.claimAhead = claimAhead;
    }

    /** A delivery was received (it will be handed over in this order): it joins the line. */
    void received(Delivery d) {
        d.joinLine(this, sequence.incrementAndGet());
        line.add(d);
    }

    /**
     * {@return the deliveries received after {@code d}, not settled, on the same AMQP channel
     * generation, holding no claim; at most {@code claim-ahead − 1}} Settled ones are dropped from the
     * line on the way: the guard asks for every delivery, so the line stays as short as the
     * deliveries in flight.
     */
    List<Delivery> behind(Delivery d) {
        List<Delivery> behind = new ArrayList<>(claimAhead - 1);
        for (Iterator<Delivery> it = line.iterator(); it.hasNext(); ) {
            Delivery e = it.next();
            if (e.isSettled()) {
                it.remove();
            } else if (behind.size() < claimAhead - 1 && e.sequenceInLine() > d.sequenceInLine()
                    && e.aheadClaim() == null && !e.isStale()) {
                behind.add(e);
            }
        }
        return behind;
    }
}
