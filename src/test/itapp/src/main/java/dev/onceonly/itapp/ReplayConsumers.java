package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The consumers whose dead letters DeadLetterReplayIT replays, both with the ledger on and a done
 * mark kept only seconds (so that the ledger alone remembers a key): {@code it-replay-late} takes
 * the key of a dead letter, processed by another copy, and {@code it-replay-fixed} fails while its
 * cause is broken (one attempt: dead-lettered at once) and works once the test fixes it.
 */
@ApplicationScoped
public class ReplayConsumers {

    @Inject
    ItRecorder recorder;

    private final AtomicBoolean broken = new AtomicBoolean();

    /** Breaks or fixes the cause {@code it-replay-fixed} fails on. */
    void broken(boolean on) {
        broken.set(on);
    }

    @Incoming("it-replay-late")
    @IdempotentMessage(consumer = "it-replay-late", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/id", lease = "3s",
            retention = "3s")
    public void late(String body) {
        recorder.delivered("it-replay-late", body);
        recorder.effect("it-replay-late", body);
    }

    @Incoming("it-replay-fixed")
    @IdempotentMessage(consumer = "it-replay-fixed", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/id", lease = "3s",
            retention = "3s")
    public void fixed(String body) {
        recorder.delivered("it-replay-fixed", body);
        if (broken.get()) {
            throw new IllegalStateException("the stock service is down");
        }
        recorder.effect("it-replay-fixed", body);
    }
}
