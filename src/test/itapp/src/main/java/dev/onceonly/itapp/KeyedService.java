package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Message;

/** Guarded by message id; finds the message through {@code Message.unwrap}. */
@ApplicationScoped
public class KeyedService {

    @Inject
    ItRecorder recorder;

    @IdempotentMessage(consumer = "it-keyed", keyStrategy = KeyStrategy.MESSAGE_ID)
    public void handle(Message<String> message) {
        recorder.effect("it-keyed", message.getPayload());
    }
}
