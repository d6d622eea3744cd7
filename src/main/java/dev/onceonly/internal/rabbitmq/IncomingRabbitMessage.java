package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A delivery as a Reactive Messaging message. Its metadata is the delivery's
 * {@link IncomingRabbitMetadata}, reachable as metadata ({@code getMetadata(IncomingRabbitMetadata.class)},
 * or a method parameter of that type) and by {@code unwrap}, which is how the guard finds it on a
 * {@code Message} parameter. Ack and nack settle the delivery through its channel's {@link Settler}.
 */
final class IncomingRabbitMessage<T> implements Message<T> {

    /** Where the application's ack and nack of a delivery go: its incoming channel. */
    interface Settler {
        /** The application accepted the delivery. */
        CompletionStage<Void> ack(Delivery d);

        /** The application did not accept the delivery. */
        CompletionStage<Void> nack(Delivery d, Throwable reason);
    }

    private final T payload;
    private final Delivery delivery;
    private final Settler inbound;
    private final Metadata metadata;

    IncomingRabbitMessage(T payload, Delivery delivery, Settler inbound) {
        this.payload = payload;
        this.delivery = delivery;
        this.inbound = inbound;
        this.metadata = Metadata.of(delivery.metadata);
    }

    Delivery delivery() {
        return delivery;
    }

    @Override
    public T getPayload() {
        return payload;
    }

    @Override
    public Metadata getMetadata() {
        return metadata;
    }

    @Override
    public Supplier<CompletionStage<Void>> getAck() {
        return () -> inbound.ack(delivery);
    }

    @Override
    public Function<Throwable, CompletionStage<Void>> getNack() {
        return reason -> inbound.nack(delivery, reason);
    }

    @Override
    public Function<Metadata, CompletionStage<Void>> getAckWithMetadata() {
        return ignored -> inbound.ack(delivery);
    }

    @Override
    public BiFunction<Throwable, Metadata, CompletionStage<Void>> getNackWithMetadata() {
        return (reason, ignored) -> inbound.nack(delivery, reason);
    }

    @Override
    public <C> C unwrap(Class<C> type) {
        if (type.isInstance(delivery.metadata)) {
            return type.cast(delivery.metadata);
        }
        return Message.super.unwrap(type);
    }
}
