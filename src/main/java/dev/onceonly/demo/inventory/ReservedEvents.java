package dev.onceonly.demo.inventory;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A downstream consumer of {@code order.reserved}, the events the inventory consumer publishes
 * through the outbox: guarded on the message id the outbox gives each event, so an event the relay
 * published twice (it died between the broker's confirm and marking the row sent) counts once.
 */
@ApplicationScoped
public class ReservedEvents {

    static final String CONSUMER = "reserved";

    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();

    /** Applies each event once: the guard keys it on its message id. */
    @Incoming("reserved")
    @IdempotentMessage(consumer = CONSUMER, keyStrategy = KeyStrategy.MESSAGE_ID)
    public void onReserved(String json) {
        applied.incrementAndGet();
    }

    void onGuardEvent(@Observes GuardEvent event) {
        if (CONSUMER.equals(event.consumer()) && event.outcome() == Outcome.DUPLICATE) {
            duplicates.incrementAndGet();
        }
    }

    /** {@return the events applied (distinct message ids)} */
    long applied() {
        return applied.get();
    }

    /** {@return the copies of already applied events that arrived again} */
    long duplicates() {
        return duplicates.get();
    }
}
