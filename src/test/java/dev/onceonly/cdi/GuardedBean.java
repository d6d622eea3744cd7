package dev.onceonly.cdi;

import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.MessageView;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.atomic.AtomicInteger;

/** A consumer bean as users write them, in the shapes the guard supports. */
@ApplicationScoped
public class GuardedBean {

    private final AtomicInteger runs = new AtomicInteger();
    private volatile boolean fail;

    // Accessors, not fields: the test holds a client proxy, whose own fields are never set.
    public int runs() {
        return runs.get();
    }

    public void failNextCalls(boolean fail) {
        this.fail = fail;
    }

    @IdempotentMessage(consumer = "cdi-view")
    public String onMessage(MessageView message) {
        if (fail) {
            throw new IllegalStateException("handler failed");
        }
        return "run-" + runs.incrementAndGet();
    }

    @IdempotentMessage(consumer = "cdi-param")
    public int onPayload(String payload, @IdempotencyKey String orderId) {
        return runs.incrementAndGet();
    }
}
