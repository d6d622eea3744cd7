package dev.onceonly.spi;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.MessageView;

/**
 * One message on its way to a guarded method, and the place its decision is handed to.
 *
 * <p>A connector makes one per delivery and posts it on the {@link Handover}; the guard's adapter
 * (the interceptor) takes it for the one invocation made for that delivery, the guard keys on
 * {@link #message()}, and the adapter hands the guard's final decision to {@link #decided} once,
 * before the guarded method returns or throws. The connector then settles the delivery from that
 * decision (ack, requeue, dead-letter) — no exception cause chain, thread-local or CDI event
 * carries it. Calls that no connector posted for (a REST resource, a guarded bean called by a
 * consumer) get a plain {@link #of(MessageView)} whose decision goes nowhere.
 */
public interface Dispatch {

    /** {@return the message as delivered: what the guard derives the key from} */
    MessageView message();

    /**
     * The guard's final decision for this message (for {@code PROCESSED} and {@code FAILED}: after
     * the transaction completed). Called at most once, on the thread the guarded method runs on,
     * before it returns or throws; must not block or throw.
     *
     * @param event the decision
     */
    void decided(GuardEvent event);

    /**
     * As {@link #decided(GuardEvent)}, with what the guarded call throws for it: the handler's (or
     * the commit's) exception for {@code FAILED}, a refusal's exception, or {@code null}. A connector
     * that {@linkplain #settlesFromDecision() settles from the decision} needs it for a failure it
     * is not thrown: the dead letter's reason, and the stack trace it logs once. The guard's adapter
     * calls this one; the default hands the event alone to {@link #decided(GuardEvent)}.
     *
     * @param event   the decision
     * @param failure what the call throws, or {@code null} when it returns
     */
    default void decided(GuardEvent event, Throwable failure) {
        decided(event);
    }

    /**
     * Whether the connector settles this message from {@link #decided} alone, so that a refusal
     * ({@code BUSY}, {@code RETRY}, {@code CONFLICT}, {@code REJECTED}) or a handler failure
     * ({@code FAILED}) needs no exception to reach it: the guarded method the messaging runtime
     * invoked for this message may then return its skipped result instead of throwing, and the
     * runtime (which logs every exception of a consumer method as an error) stays quiet about an
     * outcome that is handled. The connector must then settle the message from the decision however
     * the messaging runtime then acknowledges it: a refusal as the refusal says, a failure as a
     * failed attempt (tried again or dead-lettered, never acknowledged as processed), and log the
     * failure itself.
     *
     * @return {@code false} unless the connector settles from the decision; {@code false} for {@link #of}
     */
    default boolean settlesFromDecision() {
        return false;
    }

    /**
     * Opens the span this message's guarded handling runs in, current on the calling thread until
     * it ends: for a connector's delivery, a CONSUMER span continuing the trace its publisher's
     * headers carry. The guard's caller opens it around the whole guarded call (claim, handler,
     * finalisation), on the thread the handler runs on, and ends it there.
     *
     * @return the span; {@link MessageTracing.Span#NONE} unless the connector traces its deliveries, and for {@link #of}
     */
    default MessageTracing.Span process() {
        return MessageTracing.Span.NONE;
    }

    /**
     * The optional claim-ahead hook: this message's place in the connector's claim-ahead line,
     * through which the guard claims the keys of the deliveries behind it with this one's and finds
     * the claim taken ahead for this one (see {@link ClaimAheadSlot} for the contract). A connector
     * that returns a slot abandons the slot's claim when it settles the message.
     *
     * @return the slot, or {@code null} when the connector claims nothing ahead (the default, and {@link #of})
     */
    default ClaimAheadSlot claimAhead() {
        return null;
    }

    /**
     * A dispatch of {@code message} that nobody waits on.
     *
     * @param message the message the guard keys on
     * @return a dispatch whose decision goes nowhere
     */
    static Dispatch of(MessageView message) {
        return new Dispatch() {
            @Override
            public MessageView message() {
                return message;
            }

            @Override
            public void decided(GuardEvent event) {
            }
        };
    }
}
