package dev.onceonly.testing;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.AheadClaim;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.MessageTracing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A dispatch, as a connector makes one per delivery, that records the decisions reported to it. */
public final class RecordingDispatch implements Dispatch {

    private final MessageView message;
    private final boolean settlesFromDecision;
    private final MessageTracing tracing;
    private final List<GuardEvent> decisions = new CopyOnWriteArrayList<>();
    private volatile AheadClaim aheadClaim;
    private volatile List<Dispatch> behind = List.of();

    public RecordingDispatch(MessageView message) {
        this(message, false);
    }

    /** {@code settlesFromDecision}: as the RabbitMQ connector's deliveries (a refusal needs no exception). */
    public RecordingDispatch(MessageView message, boolean settlesFromDecision) {
        this(message, settlesFromDecision, MessageTracing.NONE);
    }

    /** Handled in the span {@code tracing} opens for a delivery of queue {@code "queue"} with the message's headers. */
    public RecordingDispatch(MessageView message, boolean settlesFromDecision, MessageTracing tracing) {
        this.message = message;
        this.settlesFromDecision = settlesFromDecision;
        this.tracing = tracing;
    }

    @Override
    public MessageTracing.Span process() {
        return tracing.process("queue", message.headers());
    }

    @Override
    public boolean settlesFromDecision() {
        return settlesFromDecision;
    }

    @Override
    public MessageView message() {
        return message;
    }

    /** The deliveries a connector would hand over after this one ({@link #claimAheadWith}). */
    public void offerBehind(Dispatch... behind) {
        this.behind = List.of(behind);
    }

    /** As a connector's line: those offered that hold no claim yet. */
    @Override
    public List<? extends Dispatch> claimAheadWith() {
        return behind.stream().filter(d -> d.aheadClaim() == null).toList();
    }

    /** Keeps a claim taken ahead, as a connector's delivery does; {@link #settle} gives it back. */
    @Override
    public void holdAheadClaim(AheadClaim claim) {
        aheadClaim = claim;
    }

    @Override
    public AheadClaim aheadClaim() {
        return aheadClaim;
    }

    /** What a connector does when it settles the delivery: abandons a claim taken ahead. */
    public void settle() {
        AheadClaim claim = aheadClaim;
        if (claim != null) {
            claim.abandon();
        }
    }

    @Override
    public void decided(GuardEvent event) {
        decisions.add(event);
    }

    public List<GuardEvent> decisions() {
        return List.copyOf(decisions);
    }

    public List<Outcome> outcomes() {
        return decisions.stream().map(GuardEvent::outcome).toList();
    }
}
