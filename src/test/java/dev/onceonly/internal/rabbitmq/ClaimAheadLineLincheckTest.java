package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.Handover;
import dev.onceonly.testing.DrainedScheduler;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Model checks the {@link ClaimAheadLine} and the claims its {@link Delivery} objects hold, under
 * Lincheck: the consumer's thread receives deliveries into the line while others are settled (by
 * {@link Settlement}, as the connector does) and the guard, guarding one, claims ahead for those
 * behind it, in every interleaving the checker explores.
 *
 * <p>The test plays the guard's part of the {@link ClaimAheadSlot} contract as the engine does: it
 * asks {@link ClaimAheadSlot#behind}, offers each delivery a claim ({@link ClaimAheadSlot#hold})
 * and abandons one the delivery did not keep.
 *
 * <p>Properties, once all calls returned:
 * <ul>
 *   <li>no settled delivery stays in the line, and no element is lost: the line holds exactly the
 *       deliveries received and not settled (and none once the rest are settled);</li>
 *   <li>no claim is leaked: a claim is abandoned unless an unsettled delivery holds it, in particular
 *       a claim offered after the delivery was settled is refused, and its taker abandons it;</li>
 *   <li>a claim a delivery holds is never abandoned under it.</li>
 * </ul>
 * The operations return nothing (the line's iteration is weakly consistent, not linearizable): the
 * properties are checked after each run ({@link Validate}).
 */
@Param(name = "d", gen = IntGen.class, conf = "0:" + (ClaimAheadLineLincheckTest.DELIVERIES - 1))
public class ClaimAheadLineLincheckTest {

    static final int DELIVERIES = 4;
    /** Received before the calls start, as a prefetch buffers them; the others by {@link #receive}. */
    private static final int BUFFERED = 2;

    private final CountingBroker broker = new CountingBroker(DELIVERIES);
    private final Settlement settlement = new Settlement(Duration.ofSeconds(1), new DrainedScheduler(), new Handover());
    private final ClaimAheadLine<Delivery> line = new ClaimAheadLine<>(3);
    private final Delivery[] deliveries = new Delivery[DELIVERIES];
    private final AtomicInteger received = new AtomicInteger();
    private final Queue<Claim> claims = new ConcurrentLinkedQueue<>();

    public ClaimAheadLineLincheckTest() {
        for (int i = 0; i < DELIVERIES; i++) {
            deliveries[i] = broker.delivery(i + 1);
        }
        for (int i = 0; i < BUFFERED; i++) {
            receive();
        }
    }

    /**
     * The broker hands the next delivery over: the consumer's thread only, in order, as amqp-client
     * does. Not tracked by the settlement: its set is not the subject here, and the model checker
     * makes identity hash codes deterministic only inside the operations, so a delivery hashed into
     * a set by the constructor would not be found there.
     */
    @Operation(nonParallelGroup = "consumer")
    public void receive() {
        int i = received.getAndIncrement();
        if (i < DELIVERIES) {
            line.received(deliveries[i]);
        }
    }

    /** Acked, requeued, dead-lettered or requeued at shutdown: each goes through the same settle-once step. */
    @Operation
    public void settle(@Param(name = "d") int i) {
        settlement.requeue(deliveries[i]);
    }

    /** The guard, guarding delivery {@code i}, claims ahead for those behind it. */
    @Operation
    public void claimAhead(@Param(name = "d") int i) {
        for (Delivery behind : deliveries[i].behind()) {
            Claim claim = new Claim(behind);
            claims.add(claim);
            if (!behind.hold(claim)) {
                claim.abandon();
            }
        }
    }

    /** After all calls returned, and again once every delivery is settled. */
    @Validate
    public void theLineHoldsWhatIsUnsettledAndNoClaimLeaks() {
        int waiting = 0;
        for (int i = 0; i < Math.min(received.get(), DELIVERIES); i++) {
            waiting += deliveries[i].isSettled() ? 0 : 1;
        }
        if (line.length() != waiting) {
            throw new IllegalStateException("the line holds " + line.length() + ", " + waiting + " received and not settled");
        }
        checkClaims();
        for (Delivery d : deliveries) {
            settlement.requeue(d);
        }
        if (line.length() != 0) {
            throw new IllegalStateException("all settled, the line still holds " + line.length());
        }
        checkClaims();
    }

    private void checkClaims() {
        for (Claim c : claims) {
            boolean held = !c.delivery.isSettled() && c.delivery.held() == c;
            if (held == c.abandoned.get() > 0) {
                throw new IllegalStateException("delivery " + c.delivery.deliveryTag + (held
                        ? " holds a claim that was abandoned" : " leaked a claim: not held, not abandoned"));
            }
        }
    }

    /** A claim taken ahead: counts its releases (idempotent, as the engine's). */
    private static final class Claim implements ClaimAheadSlot.Claim {
        final Delivery delivery;
        final AtomicInteger abandoned = new AtomicInteger();

        Claim(Delivery delivery) {
            this.delivery = delivery;
        }

        @Override
        public void abandon() {
            abandoned.incrementAndGet();
        }
    }

    @Test
    void noSettledDeliveryStaysInTheLineNoneIsLostAndNoClaimLeaks() {
        new ModelCheckingOptions()
                .iterations(20)
                .invocationsPerIteration(50)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(0)
                .check(getClass());
    }
}
