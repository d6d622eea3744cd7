package dev.onceonly.spi;

import dev.onceonly.api.MessageView;

import java.util.List;

/**
 * A delivery's place in its connector's claim-ahead line: the one hook through which the guard
 * claims the keys of the deliveries the connector will hand over next together with the key of the
 * one it is guarding (a connector's {@code claim-ahead}), and through which each of them keeps its
 * claim until its own turn.
 *
 * <p>The guard, guarding a message whose slot {@linkplain #held() holds} no claim, asks the slot for
 * those {@linkplain #behind() behind} it, claims all their keys in one call to the store, and offers
 * each slot its claim ({@link #hold}); in each message's turn it takes the claim it finds
 * {@linkplain #held() held} instead of claiming again. The connector {@linkplain Claim#abandon()
 * abandons} a slot's claim when it settles the delivery (ack, requeue, dead-letter, a channel that
 * closed), whether the guard used it or not.
 *
 * <p>Implementations are called from several threads at once (the guard's, the connector's
 * settling ones) and must not block.
 */
public interface ClaimAheadSlot {

    /** {@return the message as delivered: what the guard derives its key from} */
    MessageView message();

    /**
     * {@return the slots of the deliveries the connector will hand over to the same guarded method
     * after this one, not settled and holding no claim, in the order they will be handed over; at
     * most as many as the connector is configured to claim ahead, possibly none}
     */
    List<? extends ClaimAheadSlot> behind();

    /**
     * Keeps {@code claim} for the guard, unless the slot holds one already or its delivery was
     * settled. The caller abandons a claim that was not kept: nobody else would release it.
     *
     * @param claim the claim taken ahead for this message
     * @return whether the slot keeps it; exactly one of concurrent offers wins
     */
    boolean hold(Claim claim);

    /**
     * {@return the claim kept by {@link #hold}, or {@code null} while the slot keeps none and could
     * keep one. Once the delivery is settled, a claim that is no claim of the guard's: nothing is
     * claimed ahead for a settled delivery}
     */
    Claim held();

    /**
     * A claim the guard took for a delivery before its guarded method was invoked for it, kept by
     * the delivery's slot until the guard uses it.
     */
    @FunctionalInterface
    interface Claim {

        /**
         * The delivery was settled: releases the claim unless the guard used it, so a redelivery
         * elsewhere does not wait for its lease to end. Idempotent; never throws (a claim that
         * cannot be released runs out with its lease).
         */
        void abandon();
    }
}
