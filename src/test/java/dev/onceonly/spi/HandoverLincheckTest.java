package dev.onceonly.spi;

import dev.onceonly.api.MessageView;
import dev.onceonly.testing.RecordingDispatch;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

import java.util.Map;

/**
 * Model checks the {@link Handover} under Lincheck: connectors post deliveries, interceptors take
 * them and settlements withdraw them, on any threads, in every interleaving the checker explores.
 *
 * <p>Property: no element lost, none taken twice. The results are checked for linearizability
 * against the same calls made one at a time on a map keyed by identity (this class, run
 * sequentially, is that specification): a take finds a delivery if and only if it was posted and
 * neither taken nor withdrawn since, so no two takes get one posting and no take misses a posting
 * that returned before it began. After each run, every payload gets its own delivery's dispatch,
 * never another's, and {@link Handover#pending} counts exactly what is still there.
 *
 * <p>The payloads are equal strings of distinct identity, as two deliveries with the same body are:
 * the handover must tell them apart. A connector posts each delivery once; posting one again here
 * (the random scenarios do) just posts it anew, as the map does.
 */
@Param(name = "item", gen = IntGen.class, conf = "0:" + (HandoverLincheckTest.ITEMS - 1))
public class HandoverLincheckTest {

    static final int ITEMS = 2;

    private final Handover handover = new Handover();
    private final Object[] payloads = new Object[ITEMS];
    private final Dispatch[] dispatches = new Dispatch[ITEMS];

    public HandoverLincheckTest() {
        for (int i = 0; i < ITEMS; i++) {
            payloads[i] = new String("same body"); // equal, not identical
            dispatches[i] = new RecordingDispatch(MessageView.of("orders", "placed", null, Map.of(), new byte[] {(byte) i}));
        }
    }

    /** The connector hands delivery {@code i} over. */
    @Operation
    public void post(@Param(name = "item") int i) {
        handover.post(payloads[i], dispatches[i]);
    }

    /** The interceptor of the call made with that payload. @return whether it got that delivery */
    @Operation
    public boolean take(@Param(name = "item") int i) {
        Dispatch d = handover.take(payloads[i]);
        if (d != null && d != dispatches[i]) {
            throw new IllegalStateException("payload " + i + " got another delivery's dispatch");
        }
        return d != null;
    }

    /** The delivery was settled. */
    @Operation
    public void withdraw(@Param(name = "item") int i) {
        handover.withdraw(payloads[i]);
    }

    /** After all calls returned: {@link Handover#pending} counts what a take still finds. */
    @Validate
    public void pendingCountsWhatIsStillThere() {
        int pending = handover.pending();
        int there = 0;
        for (int i = 0; i < ITEMS; i++) {
            there += take(i) ? 1 : 0;
        }
        if (pending != there) {
            throw new IllegalStateException("pending() says " + pending + ", " + there + " are there");
        }
    }

    @Test
    void postsTakesAndWithdrawalsLoseNothingAndTakeNothingTwice() {
        new ModelCheckingOptions()
                .iterations(10)
                .invocationsPerIteration(100)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(1)
                .check(getClass());
    }
}
