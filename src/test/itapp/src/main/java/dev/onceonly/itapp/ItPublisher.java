package dev.onceonly.itapp;

import dev.onceonly.rabbitmq.OutgoingRabbitMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Emitter;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Publishes through the outgoing channel it-out, which it-arrivals consumes. */
@ApplicationScoped
public class ItPublisher {

    @Inject
    @Channel("it-out")
    @OnOverflow(value = OnOverflow.Strategy.BUFFER, bufferSize = 2048)
    Emitter<String> out;

    /**
     * Sends {@code count} messages, each with its own routing key, message id and headers, and
     * returns once the broker confirmed them all.
     */
    int publish(String run, int count) throws Exception {
        List<CompletableFuture<Void>> confirms = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            CompletableFuture<Void> confirmed = new CompletableFuture<>();
            OutgoingRabbitMetadata meta = OutgoingRabbitMetadata.builder()
                    .routingKey(routingKey(i))
                    .messageId(run + "-" + i)
                    .header("x-seq", i)
                    .header("x-run", run)
                    .build();
            out.send(Message.of(body(run, i), Metadata.of(meta), () -> {
                confirmed.complete(null);
                return CompletableFuture.completedFuture(null);
            }, failure -> {
                confirmed.completeExceptionally(failure);
                return CompletableFuture.completedFuture(null);
            }));
            confirms.add(confirmed);
        }
        CompletableFuture.allOf(confirms.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        return confirms.size();
    }

    static String routingKey(int i) {
        return "it.arrivals." + (i % 3);
    }

    static String body(String run, int i) {
        return "{\"run\":\"" + run + "\",\"seq\":" + i + "}";
    }
}
