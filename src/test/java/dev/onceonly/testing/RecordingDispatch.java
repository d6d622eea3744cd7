package dev.onceonly.testing;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.MessageTracing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A dispatch, as a connector makes one per delivery, that records the decisions reported to it; its
 * own claim-ahead slot, offering the slots {@link #offerBehind} names.
 */
public final class RecordingDispatch implements Dispatch, ClaimAheadSlot {

    private final MessageView message;
    private final boolean settlesFromDecision;
    private final MessageTracing tracing;
    private final List<GuardEvent> decisions = new CopyOnWriteArrayList<>();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    /** As a connector's delivery: the claim kept, or {@link #SETTLED} once settled. */
    private final AtomicReference<ClaimAheadSlot.Claim> aheadClaim = new AtomicReference<>();
    private volatile List<ClaimAheadSlot> behind = List.of();

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

    /** The slots of the deliveries a connector would hand over after this one ({@link #behind}). */
    public void offerBehind(ClaimAheadSlot... behind) {
        this.behind = List.of(behind);
    }

    @Override
    public ClaimAheadSlot claimAhead() {
        return this;
    }

    /** As a connector's line: those offered that hold no claim yet. */
    @Override
    public List<? extends ClaimAheadSlot> behind() {
        return behind.stream().filter(d -> d.held() == null).toList();
    }

    /** Keeps a claim taken ahead, as a connector's delivery does; {@link #settle} gives it back. */
    @Override
    public boolean hold(ClaimAheadSlot.Claim claim) {
        return aheadClaim.compareAndSet(null, claim);
    }

    @Override
    public ClaimAheadSlot.Claim held() {
        return aheadClaim.get();
    }

    /** What a connector does when it settles the delivery: abandons a claim taken ahead, and keeps none from now on. */
    public void settle() {
        ClaimAheadSlot.Claim claim = aheadClaim.getAndSet(SETTLED);
        if (claim != null) {
            claim.abandon();
        }
    }

    private static final ClaimAheadSlot.Claim SETTLED = () -> { };

    @Override
    public void decided(GuardEvent event) {
        decisions.add(event);
    }

    /** As a connector that settles from the decision: keeps what the call threw, for the dead letter and the log. */
    @Override
    public void decided(GuardEvent event, Throwable failure) {
        if (failure != null) {
            failures.add(failure);
        }
        decided(event);
    }

    /** {@return what the guarded calls threw, as handed over with their decisions} */
    public List<Throwable> failures() {
        return List.copyOf(failures);
    }

    public List<GuardEvent> decisions() {
        return List.copyOf(decisions);
    }

    public List<Outcome> outcomes() {
        return decisions.stream().map(GuardEvent::outcome).toList();
    }
}
