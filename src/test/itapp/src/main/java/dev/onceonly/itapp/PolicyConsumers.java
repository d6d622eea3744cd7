package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.io.StringReader;

/**
 * Consumers for the per-consumer policies, configured as an application would: a composite key
 * compared on some fields only, and a backoff whose delays the broker holds.
 */
@ApplicationScoped
public class PolicyConsumers {

    @Inject
    ItRecorder recorder;

    /**
     * Keyed on tenant and order id together; copies that differ only outside {@code /sku} and
     * {@code /quantity} (a producer that re-serialised with a new timestamp) are duplicates.
     */
    @Incoming("it-composite")
    @IdempotentMessage(consumer = "it-composite", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/tenant,/orderId",
            conflictFields = "/sku,/quantity")
    public void composite(String body) {
        JsonObject o = Json.createReader(new StringReader(body)).readObject();
        String key = o.getString("tenant") + "/" + o.getString("orderId");
        recorder.delivered("it-composite", key);
        recorder.effect("it-composite", key);
    }

    /** Fails the first two deliveries of each body; its retries wait in the broker's delay queues. */
    @Incoming("it-backoff")
    @IdempotentMessage(consumer = "it-backoff")
    public void backoff(String body) {
        if (recorder.delivered("it-backoff", body) <= 2) {
            throw new IllegalStateException("backoff: failing on purpose");
        }
        recorder.effect("it-backoff", body);
    }
}
