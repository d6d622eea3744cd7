package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Replayable;
import dev.onceonly.http.IdempotencyKeyHeader;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.util.List;
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

    @Inject
    IdempotencyContext idempotency;

    /** What a handler sends downstream: the key and the fence, and the headers the JDK client helper sets. */
    @IdempotentMessage(consumer = "cdi-key")
    public String keyAndHeader(String payload) {
        java.net.http.HttpRequest request = IdempotencyKeyHeader.apply(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://localhost/ship"))).build();
        return idempotency.key().orElse("none") + "|" + request.headers().firstValue(IdempotencyContext.HEADER).orElse("none")
                + "|" + (idempotency.fence().isPresent() ? idempotency.fence().getAsLong() : "none")
                + "|" + request.headers().firstValue(IdempotencyContext.FENCE_HEADER).orElse("none");
    }

    public String keyOutsideAGuard() {
        return idempotency.key().orElse("none") + "|" + (idempotency.fence().isPresent() ? "fence" : "none");
    }

    /** An exception of the application's for a message that can never succeed. */
    public static class Unprocessable extends RuntimeException {
        public Unprocessable(String message) {
            super(message);
        }
    }

    /** Declares its own exception not worth retrying; any other failure is retried. */
    @IdempotentMessage(consumer = "cdi-no-retry", noRetryFor = Unprocessable.class)
    public String onOrder(MessageView message, boolean unprocessable) {
        runs.incrementAndGet();
        throw unprocessable ? new Unprocessable("cannot be processed") : new IllegalStateException("shipping down");
    }

    /** Keyed on a tenant and an order id together; a copy is compared on its sku and quantity only. */
    @IdempotentMessage(consumer = "cdi-composite", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/tenant,/orderId",
            conflictFields = "/sku,/quantity")
    public String onTenantOrder(MessageView message) {
        return "run-" + runs.incrementAndGet();
    }

    @IdempotentMessage(consumer = "cdi-param")
    public int onPayload(String payload, @IdempotencyKey String orderId) {
        return runs.incrementAndGet();
    }

    /** Keeps its result (a generic one): a duplicate gets the first call's, replayed. */
    @IdempotentMessage(consumer = "cdi-result", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/id")
    public Replayable<List<String>> charge(String json) {
        if (fail) {
            throw new IllegalStateException("provider down");
        }
        return Replayable.of(List.of("run-" + runs.incrementAndGet(), json));
    }
}
