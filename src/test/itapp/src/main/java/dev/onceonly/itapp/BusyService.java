package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Guarded by message id. A message with header {@code x-hold} keeps its claim until the test
 * releases it, so that a copy delivered meanwhile finds the key in progress (BUSY).
 */
@ApplicationScoped
public class BusyService {

    @Inject
    ItRecorder recorder;

    private volatile CountDownLatch release = new CountDownLatch(1);
    private volatile boolean holding;

    @IdempotentMessage(consumer = "it-busy", keyStrategy = KeyStrategy.MESSAGE_ID, lease = "60s")
    public void handle(String body, IncomingRabbitMetadata meta) throws InterruptedException {
        if (meta.headers().containsKey("x-hold")) {
            holding = true;
            try {
                release.await(60, TimeUnit.SECONDS); // bounded: a lost test must not block the channel forever
            } finally {
                holding = false;
            }
        }
        recorder.effect("it-busy", meta.messageId());
    }

    boolean holding() {
        return holding;
    }

    void release() {
        release.countDown();
        release = new CountDownLatch(1);
    }
}
