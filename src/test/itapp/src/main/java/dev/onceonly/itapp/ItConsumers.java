package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The test consumers, one per behaviour the integration tests show. Each records its deliveries
 * and effects in {@link ItRecorder}; message bodies carry a per-run unique id.
 */
@ApplicationScoped
public class ItConsumers {

    @Inject
    ItRecorder recorder;

    @Inject
    KeyedService keyed;

    @Inject
    BusyService busy;

    /** What arrived on it-arrivals, by message id: the metadata as the consumer saw it. */
    private final Map<String, IncomingRabbitMetadata> arrivals = new ConcurrentHashMap<>();
    private final Map<String, String> arrivalBodies = new ConcurrentHashMap<>();

    /** Plain consumer, payload and metadata: no guard, acked when it returns. */
    @Incoming("it-arrivals")
    public void arrivals(String body, IncomingRabbitMetadata meta) {
        recorder.checkContext();
        recorder.delivered("it-arrivals", meta.messageId());
        arrivals.put(meta.messageId(), meta);
        arrivalBodies.put(meta.messageId(), body);
    }

    /** The metadata of an arrival on it-arrivals, or {@code null}. (A method: fields of a CDI client proxy are not the bean's.) */
    IncomingRabbitMetadata arrival(String messageId) {
        return arrivals.get(messageId);
    }

    String arrivalBody(String messageId) {
        return arrivalBodies.get(messageId);
    }

    /** Guarded, payload only: fails on the first two deliveries of each body. */
    @Incoming("it-flaky")
    @IdempotentMessage(consumer = "it-flaky")
    public void flaky(String body) {
        if (recorder.delivered("it-flaky", body) <= 2) {
            throw new IllegalStateException("flaky: failing on purpose");
        }
        recorder.effect("it-flaky", body);
    }

    /** Plain consumer that always fails: dead-lettered after max attempts (classic queue, counted by the connector). */
    @Incoming("it-doomed")
    public void doomed(String body) {
        recorder.delivered("it-doomed", body);
        throw new IllegalStateException("doomed: always fails");
    }

    /** Guarded consumer that always fails on a quorum queue (attempts counted by the broker). */
    @Incoming("it-doomed-quorum")
    @IdempotentMessage(consumer = "it-doomed-quorum")
    public void doomedQuorum(String body) {
        recorder.delivered("it-doomed-quorum", body);
        throw new IllegalStateException("doomed: always fails");
    }

    /** Guarded, payload only, quick: the content key must include the real exchange and routing key. */
    @Incoming("it-steady")
    @IdempotentMessage(consumer = "it-steady")
    public void steady(String body) throws InterruptedException {
        recorder.checkContext();
        recorder.delivered("it-steady", body);
        Thread.sleep(2);
        recorder.effect("it-steady", body);
    }

    /** Message shape: the method settles the message itself; the guarded work is a method taking the Message. */
    @Incoming("it-keyed")
    public CompletionStage<Void> keyed(Message<String> message) {
        try {
            keyed.handle(message);
            return message.ack();
        } catch (RuntimeException e) {
            return message.nack(e);
        }
    }

    /** Two queues feeding one guarded consumer: a holder on one, its duplicate on the other. */
    @Incoming("it-busy-a")
    public void busyA(String body, IncomingRabbitMetadata meta) throws InterruptedException {
        recorder.delivered("it-busy-a", meta.messageId());
        busy.handle(body, meta);
    }

    @Incoming("it-busy-b")
    public void busyB(String body, IncomingRabbitMetadata meta) throws InterruptedException {
        recorder.delivered("it-busy-b", meta.messageId());
        busy.handle(body, meta);
    }
}
