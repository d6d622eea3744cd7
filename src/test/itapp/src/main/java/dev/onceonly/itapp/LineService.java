package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * A guarded bean method that consumers call, not a consumer itself: its key is the content of its
 * own argument, so each distinct line is reserved once, whichever delivery it arrived in.
 */
@ApplicationScoped
public class LineService {

    @Inject
    ItRecorder recorder;

    @IdempotentMessage(consumer = "it-lines", keyStrategy = KeyStrategy.CONTENT)
    public void reserve(String line) {
        recorder.effect("it-lines", line);
    }
}
