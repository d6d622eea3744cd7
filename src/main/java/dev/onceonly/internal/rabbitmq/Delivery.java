package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.Channel;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.MessageView;
import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.MessageTracing;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One delivery of an incoming channel, from the broker handing it over until it is settled. It is
 * the {@link Dispatch} the guard's decision is handed to, which its channel settles it from
 * (through {@link Disposition}) when the application acks or nacks it.
 *
 * <p>Two one-way latches keep the broker protocol safe: {@link #decide()} lets only the first
 * ack/nack of the application through (Reactive Messaging or the application may call both, or
 * twice), and {@link #claimSettlement()} lets exactly one broker action happen (a delayed retry and a
 * shutdown may race for it). Acking a delivery tag twice would make the broker close the channel.
 *
 * <p>With claim-ahead it is also its own {@link ClaimAheadSlot}: its place in the channel's
 * {@link ClaimAheadLine}, keeping the claim the guard took ahead for it until it is settled.
 */
final class Delivery implements Dispatch, ClaimAheadSlot, ClaimAheadLine.Member<Delivery> {

    /** Where the delivery is; shutdown gives back {@link #BUFFERED} and {@link #HELD} ones at once. */
    enum Stage {
        /** Received, waiting for the application's demand. */
        BUFFERED,
        /** Handed to the application, not yet acked or nacked. */
        PROCESSING,
        /** Nacked, waiting out the retry delay. */
        HELD,
        /** Going back to the queue at a stop, never to be handed to the application. */
        RETURNING,
        /** Being published to the dead-letter exchange or as a retry; settled on the confirm. */
        PUBLISHING
    }

    final Channel channel;
    final long deliveryTag;
    final IncomingRabbitMetadata metadata;
    /** What the application's method receives; the guard recognises the delivery by this object. */
    final Object payload;
    /** Claims to be a retry copy, but this connector did not make it: never handed to the application. */
    final boolean forgedCopy;
    /** Where its handling's span gets the publisher's trace context from: the headers, read only when it is handled. */
    private final MessageTracing tracing;
    /** Generation of the consumer's AMQP channel at delivery; see {@link #isStale()}. */
    private final ChannelGeneration generation;
    private final long receivedIn;
    private final AtomicBoolean decided = new AtomicBoolean();
    private final AtomicBoolean settled = new AtomicBoolean();
    /**
     * Moves one way between threads: the emitting loop hands a buffered delivery over, a stop gives
     * a buffered or held one back, and only one of them may win it ({@link #handOver},
     * {@link #startReturning}).
     */
    private final AtomicReference<Stage> stage = new AtomicReference<>(Stage.BUFFERED);
    volatile ScheduledFuture<?> hold;
    /** The guard's decision, when a guarded method was invoked for this delivery. */
    private volatile GuardEvent guardDecision;
    /** What the guarded call threw for a FAILED decision; read when the application acks instead. */
    private volatile Throwable guardFailure;
    /**
     * A claim the guard took before this delivery was guarded; abandoned when it is settled. Once
     * settled it holds {@link #SETTLED}, so a claim that arrives after the settlement (a
     * {@code claimAll} in flight while the channel closed) is refused and its taker abandons it.
     */
    private final AtomicReference<ClaimAheadSlot.Claim> aheadClaim = new AtomicReference<>();
    /** With claim-ahead: the channel's line of deliveries handed over, and this one's place in it. */
    private volatile ClaimAheadLine<Delivery> line;
    private volatile long sequenceInLine;

    Delivery(Channel channel, IncomingRabbitMetadata metadata, Object payload, ChannelGeneration generation,
             boolean forgedCopy, MessageTracing tracing) {
        this.channel = channel;
        this.deliveryTag = metadata.deliveryTag();
        this.metadata = metadata;
        this.payload = payload;
        this.forgedCopy = forgedCopy;
        this.tracing = tracing;
        this.generation = generation;
        this.receivedIn = generation.current();
    }

    @Override
    public MessageView message() {
        return metadata;
    }

    @Override
    public void decided(GuardEvent event) {
        guardDecision = event;
    }

    @Override
    public void decided(GuardEvent event, Throwable failure) {
        guardFailure = failure;
        guardDecision = event;
    }

    /**
     * The CONSUMER span {@code <queue> process}, continuing the trace the publisher's headers carry
     * (a retry copy or a requeued delivery carries the original's headers, so every attempt
     * continues the same trace).
     */
    @Override
    public MessageTracing.Span process() {
        return tracing.process(metadata.queue(), metadata.headers());
    }

    @Override
    public void joinLine(ClaimAheadLine<Delivery> line, long sequence) {
        this.sequenceInLine = sequence;
        this.line = line;
    }

    @Override
    public long sequenceInLine() {
        return sequenceInLine;
    }

    /** Itself, once in the channel's claim-ahead line; {@code null} on a channel that claims nothing ahead. */
    @Override
    public ClaimAheadSlot claimAhead() {
        return line == null ? null : this;
    }

    /** The deliveries handed over after this one that hold no claim yet. */
    @Override
    public List<Delivery> behind() {
        ClaimAheadLine<Delivery> l = line;
        return l == null ? List.of() : l.behind(this);
    }

    /** Keeps {@code claim} unless the delivery holds one already or was settled. */
    @Override
    public boolean hold(ClaimAheadSlot.Claim claim) {
        return aheadClaim.compareAndSet(null, claim);
    }

    @Override
    public ClaimAheadSlot.Claim held() {
        return aheadClaim.get();
    }

    /**
     * Settled: a claim taken ahead that the guard did not use is released ({@link ClaimAheadSlot.Claim#abandon}),
     * and none is kept from now on; the delivery leaves the claim-ahead line.
     */
    void settled() {
        ClaimAheadLine<Delivery> l = line;
        if (l != null) {
            l.remove(this); // first: abandoning takes a round trip to the store
        }
        ClaimAheadSlot.Claim claim = aheadClaim.getAndSet(SETTLED);
        if (claim != null && claim != SETTLED) {
            claim.abandon();
        }
    }

    /** What a settled delivery holds instead of a claim: nothing to abandon, nothing the guard can take. */
    private static final ClaimAheadSlot.Claim SETTLED = () -> { };

    /**
     * Its channel settles from the decision: a refusal is requeued or dead-lettered, and a failure
     * tried again or dead-lettered, even when acked.
     */
    @Override
    public boolean settlesFromDecision() {
        return true;
    }

    /** The guard's decision, or {@code null} when no guarded method was invoked for this delivery. */
    GuardEvent guardDecision() {
        return guardDecision;
    }

    /** What the guarded call threw for this delivery's decision, or {@code null}. */
    Throwable guardFailure() {
        return guardFailure;
    }

    Stage stage() {
        return stage.get();
    }

    void stage(Stage next) {
        stage.set(next);
    }

    /**
     * Takes a buffered delivery for the application. False when a stop took it first: it is going
     * back to the queue, and handing it over as well would process a delivery that is no longer this
     * consumer's and leave it on the handover for good.
     */
    boolean handOver() {
        return stage.compareAndSet(Stage.BUFFERED, Stage.PROCESSING);
    }

    /**
     * Takes a buffered or held delivery to give it back at a stop. False when it is no longer
     * waiting, or another thread is giving it back already (a hold that began as the stop did):
     * given back twice, it would be copied twice where a requeue counts as an attempt.
     */
    boolean startReturning() {
        return stage.compareAndSet(Stage.BUFFERED, Stage.RETURNING) || stage.compareAndSet(Stage.HELD, Stage.RETURNING);
    }

    /** True for the first ack or nack only. */
    boolean decide() {
        return decided.compareAndSet(false, true);
    }

    /** True for the one caller allowed to settle this delivery with the broker. */
    boolean claimSettlement() {
        return settled.compareAndSet(false, true);
    }

    @Override
    public boolean isSettled() {
        return settled.get();
    }

    /**
     * Whether the AMQP channel this delivery came on has closed since: the broker has already put
     * the message back in the queue, and settling it is pointless (amqp-client drops acks of a
     * previous channel incarnation).
     */
    @Override
    public boolean isStale() {
        return generation.current() != receivedIn;
    }

    /** Counts the closures of one consumer's AMQP channel (amqp-client recovers it under the same object). */
    static final class ChannelGeneration {
        private volatile long value;

        long current() {
            return value;
        }

        void next() {
            value++;
        }
    }
}
