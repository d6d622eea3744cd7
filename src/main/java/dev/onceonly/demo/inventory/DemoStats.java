package dev.onceonly.demo.inventory;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * Counts what the guard decided for the inventory consumer ({@link InventoryConsumer#countsAsInventory}),
 * from OnceOnly's {@link GuardEvent}s.
 */
@ApplicationScoped
public class DemoStats {

    private final AtomicLongArray outcomes = new AtomicLongArray(Outcome.values().length);
    private final AtomicLong duplicatesByLedger = new AtomicLong();

    void onGuardEvent(@Observes GuardEvent event) {
        if (!InventoryConsumer.countsAsInventory(event.consumer())) {
            return;
        }
        outcomes.incrementAndGet(event.outcome().ordinal());
        if (event.outcome() == Outcome.DUPLICATE && event.layer() == Layer.LEDGER) {
            duplicatesByLedger.incrementAndGet();
        }
    }

    JsonObject toJson(long deadLettered, int shippingCalls, int shipments) {
        long duplicates = outcomes.get(Outcome.DUPLICATE.ordinal());
        JsonObjectBuilder b = JSON.createObjectBuilder()
                .add("processed", outcomes.get(Outcome.PROCESSED.ordinal()))
                .add("duplicateByClaimStore", duplicates - duplicatesByLedger.get())
                .add("duplicateByLedger", duplicatesByLedger.get())
                .add("busy", outcomes.get(Outcome.BUSY.ordinal()))
                .add("failed", outcomes.get(Outcome.FAILED.ordinal()))
                .add("retry", outcomes.get(Outcome.RETRY.ordinal()))
                .add("conflict", outcomes.get(Outcome.CONFLICT.ordinal()))
                .add("rejected", outcomes.get(Outcome.REJECTED.ordinal()))
                .add("deadLettered", deadLettered)
                .add("shippingCalls", shippingCalls)
                .add("shipments", shipments);
        return b.build();
    }
}
