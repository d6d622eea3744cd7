package dev.onceonly.internal.rabbitmq;

import dev.onceonly.spi.Handover;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Several deliveries as one Reactive Messaging message ({@code batch=true}): its payload is the
 * list of their payloads, the object their dispatches are posted under on the {@link Handover}
 * ({@link Handover#postBatch}), so the guard decides each message. Its ack or nack settles every
 * delivery as its own ack or nack would, each from its own decision: one batch, as many outcomes
 * as deliveries. (Modelled on SmallRye's Pulsar connector, whose batch message fans its ack out to
 * the messages in it.)
 */
final class IncomingRabbitBatch implements Message<List<Object>> {

    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    private final List<Object> payloads;
    private final List<IncomingRabbitMessage<Object>> messages;
    private final Handover handover;

    /**
     * @param payloads the list handed to the application, element {@code i} the payload of {@code messages.get(i)}
     * @param messages the deliveries, in the batch's order
     * @param handover where the batch is posted, withdrawn when it is settled
     */
    IncomingRabbitBatch(List<Object> payloads, List<IncomingRabbitMessage<Object>> messages, Handover handover) {
        this.payloads = payloads;
        this.messages = messages;
        this.handover = handover;
    }

    List<IncomingRabbitMessage<Object>> messages() {
        return messages;
    }

    @Override
    public List<Object> getPayload() {
        return payloads;
    }

    @Override
    public Metadata getMetadata() {
        return Metadata.empty();
    }

    @Override
    public Supplier<CompletionStage<Void>> getAck() {
        return this::ackEach;
    }

    @Override
    public Function<Throwable, CompletionStage<Void>> getNack() {
        return this::nackEach;
    }

    @Override
    public Function<Metadata, CompletionStage<Void>> getAckWithMetadata() {
        return ignored -> ackEach();
    }

    @Override
    public BiFunction<Throwable, Metadata, CompletionStage<Void>> getNackWithMetadata() {
        return (reason, ignored) -> nackEach(reason);
    }

    /** Each delivery as acked: settled from its own decision (a refusal or a failure is not acked). */
    private CompletionStage<Void> ackEach() {
        handover.withdraw(payloads); // an unguarded method took nothing
        return settleEach(m -> m.getAck().get());
    }

    /** Each delivery as nacked with {@code reason}, from its own decision. */
    private CompletionStage<Void> nackEach(Throwable reason) {
        handover.withdraw(payloads);
        return settleEach(m -> m.getNack().apply(reason));
    }

    /**
     * Settles every delivery, also those after one whose settlement threw (stopping there left them
     * unsettled, their prefetch slots held until the channel closed). The settler's own stages
     * complete at once ({@link DeliverySettler}): what can fail is the call.
     *
     * @return done, or failed with the first failure, the later ones suppressed in it
     */
    private CompletionStage<Void> settleEach(Consumer<IncomingRabbitMessage<Object>> settle) {
        RuntimeException failure = null;
        for (IncomingRabbitMessage<Object> m : messages) {
            try {
                settle.accept(m);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        return failure == null ? DONE : CompletableFuture.failedFuture(failure);
    }
}
