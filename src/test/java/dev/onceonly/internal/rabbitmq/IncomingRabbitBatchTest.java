package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.Handover;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A batch's ack and nack fan out to every delivery in it ({@link IncomingRabbitBatch}). Issue 46,
 * suspicion: one delivery's settlement throwing (a publisher whose scheduler was shut down at a
 * stop rejects the dead letter's confirm timeout; a publishing connection never opened) stopped the
 * loop there, and the deliveries after it were never settled: their prefetch slots held until the
 * channel closed. Every delivery is settled; the failure is the batch's ack's, reported to its caller.
 */
class IncomingRabbitBatchTest {

    private final CountingBroker broker = new CountingBroker(4);
    private final List<Long> acked = new CopyOnWriteArrayList<>();
    private final List<Long> nacked = new CopyOnWriteArrayList<>();
    private final IllegalStateException broken = new IllegalStateException("settling delivery 2 failed");
    private final IllegalStateException alsoBroken = new IllegalStateException("settling delivery 3 failed");

    /** Settles by recording the delivery's tag, except that tags 2 and 3 throw once recorded. */
    private final IncomingRabbitMessage.Settler settler = new IncomingRabbitMessage.Settler() {
        @Override
        public CompletionStage<Void> ack(Delivery d) {
            acked.add(d.deliveryTag);
            return failIfBroken(d);
        }

        @Override
        public CompletionStage<Void> nack(Delivery d, Throwable reason) {
            nacked.add(d.deliveryTag);
            return failIfBroken(d);
        }

        private CompletionStage<Void> failIfBroken(Delivery d) {
            if (d.deliveryTag == 2) {
                throw broken;
            }
            if (d.deliveryTag == 3) {
                throw alsoBroken;
            }
            return CompletableFuture.completedFuture(null);
        }
    };

    private IncomingRabbitBatch batch() {
        List<Object> payloads = new ArrayList<>();
        List<IncomingRabbitMessage<Object>> messages = new ArrayList<>();
        for (int tag = 1; tag <= 4; tag++) {
            Delivery d = broker.delivery(tag);
            payloads.add(d.payload);
            messages.add(new IncomingRabbitMessage<>(d.payload, d, settler));
        }
        return new IncomingRabbitBatch(payloads, messages, new Handover());
    }

    @Test
    void anAckThatFailsForOneDeliverySettlesEveryOtherAndReportsTheFailure() {
        CompletionStage<Void> ack = batch().getAck().get();
        assertEquals(List.of(1L, 2L, 3L, 4L), acked, "every delivery settled, those after the failing ones too");
        assertReported(ack);
    }

    @Test
    void aNackThatFailsForOneDeliverySettlesEveryOtherAndReportsTheFailure() {
        CompletionStage<Void> nack = batch().getNack().apply(new RuntimeException("handler failed"));
        assertEquals(List.of(1L, 2L, 3L, 4L), nacked);
        assertReported(nack);
    }

    /** The first failure is the stage's, the next ones suppressed in it. */
    private void assertReported(CompletionStage<Void> stage) {
        CompletionException e = assertThrows(CompletionException.class, () -> stage.toCompletableFuture().join());
        assertSame(broken, e.getCause());
        assertEquals(List.of(alsoBroken), List.of(broken.getSuppressed()));
    }
}
