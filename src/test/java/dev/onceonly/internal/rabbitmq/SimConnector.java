package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Connection;
import dev.onceonly.internal.deadletter.DeadLetterAccess;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.reactivestreams.Subscriber;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiFunction;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The real incoming channel ({@link InboundChannel}: consumer, settlement, dispositions, retry copies,
 * dead letters, delay queues, signatures, the claim-ahead line) on the simulation's broker,
 * threads, clock and random source, for {@code dev.onceonly.simulation}. Only construction and a
 * look at its internal structures' sizes cross the package line here; everything else is the
 * connector's own code.
 */
public final class SimConnector {

    private final InboundChannel channel;
    private final int prefetch;

    private SimConnector(InboundChannel channel, int prefetch) {
        this.channel = channel;
        this.prefetch = prefetch;
    }

    /**
     * Builds the channel from its attributes (as in {@code mp.messaging.incoming.<name>.*}), subscribes
     * {@code subscriber} and starts it: it connects through {@code connect(channel, role)}, and stamps
     * its dead letters with the time of {@code wall}.
     */
    public static SimConnector start(Map<String, String> attributes, ScheduledExecutorService executor,
                                     BiFunction<String, String, Connection> connect, LongSupplier nanoClock, Clock wall,
                                     DoubleSupplier jitter, Handover handover, Subscriber<? super Message<?>> subscriber) {
        IncomingSettings settings = TestChannelConfig.of(attributes, ChannelConfig.Direction.INCOMING).incoming();
        RabbitResources resources = new RabbitResources(Executors.defaultThreadFactory(), executor, executor,
                (s, name, role, r, recovered) -> connect.apply(name, role), nanoClock, jitter, wall);
        InboundChannel channel = new InboundChannel(settings, resources, handover, () -> MessageTracing.NONE,
                () -> DeadLetterListener.NONE);
        channel.subscribe(subscriber);
        channel.start();
        return new SimConnector(channel, settings.prefetch());
    }

    /** {@return the channel's dead-letter queue, read on its publishing connection, as the operators' paths read it} */
    public DeadLetterAccess deadLetters() {
        return channel.deadLetters();
    }

    /** {@return deliveries received and not settled, as the connector counts them} */
    public int unsettled() {
        return channel.unsettledCount();
    }

    /** {@return the length of the claim-ahead line, 0 without one} */
    public int claimAheadLine() {
        return channel.claimAheadLineLength();
    }

    /** {@return what the channel still holds, by name: every one of them 0 once the world is at rest} */
    public Map<String, Integer> held() {
        Map<String, Integer> held = new LinkedHashMap<>();
        held.put("unsettled deliveries", channel.unsettledCount());
        held.put("deliveries in the claim-ahead line", channel.claimAheadLineLength());
        return held;
    }

    public int prefetch() {
        return prefetch;
    }

    /** Graceful stop, first step: cancels the consumer and gives back what waits. */
    public void stopConsuming() {
        channel.stopConsuming();
    }

    /**
     * Graceful stop, last step: requeues what is still unsettled and closes the connections. The
     * simulation waits for the drain itself, on its clock; the channel's own wait (real time, its
     * {@code drain-timeout}) should be short.
     */
    public void drainAndClose() {
        channel.drainAndClose();
    }
}
