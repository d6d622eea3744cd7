package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.Transactional;
import jakarta.transaction.TransactionSynchronizationRegistry;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;

/**
 * A guarded batch consumer, as an application writes one: the channel has {@code batch=true}, the
 * method takes the list of payloads, and the guard decides each message on its own. The effect of
 * each message is counted only when the transaction it ran in commits, so that a batch rolled back
 * and run again in halves counts each message once. A body with {@code "poison": true} fails every
 * call it is part of, with an exception not worth retrying.
 */
@ApplicationScoped
public class BatchConsumer {

    @Inject
    ItRecorder recorder;

    @Resource
    TransactionSynchronizationRegistry transactions;

    @Incoming("it-batch")
    @IdempotentMessage(consumer = "it-batch", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/id",
            noRetryFor = IllegalArgumentException.class)
    @Transactional
    public void onBatch(List<String> bodies) {
        recorder.batch("it-batch", bodies.size());
        List<String> ids = new ArrayList<>(bodies.size());
        boolean poison = false;
        for (String body : bodies) {
            JsonObject o = Json.createReader(new StringReader(body)).readObject();
            ids.add(o.getString("id"));
            recorder.delivered("it-batch", o.getString("id"));
            poison |= o.getBoolean("poison", false);
        }
        if (poison) {
            throw new IllegalArgumentException("batch: a poison message, failing on purpose");
        }
        transactions.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
            }

            @Override
            public void afterCompletion(int status) {
                if (status == Status.STATUS_COMMITTED) {
                    ids.forEach(id -> recorder.effect("it-batch", id));
                }
            }
        });
    }
}
