package dev.onceonly.cdi;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.jms.JmsMessageView;
import dev.onceonly.spi.AheadClaim;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import java.util.List;

/**
 * Thin adapter from CDI to {@link dev.onceonly.engine.GuardEngine}. Its priority puts it OUTSIDE
 * {@code @Transactional} (PLATFORM_BEFORE + 200): the claim is taken before the transaction begins
 * and finalised after it completed, so even a commit that fails at the very end releases it.
 *
 * <p>A connector's delivery is handled inside the span {@link Dispatch#process()} opens (a CONSUMER
 * span continuing the publisher's trace), made current here, on the thread the handler runs on, so
 * the guard's phases, the handler and whatever it publishes are children of it.
 */
@IdempotentMessage
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_BEFORE + 100)
public class IdempotentMessageInterceptor {

    @Inject
    OnceOnlyRuntime runtime;

    @Inject
    OnceOnlyExtension extension;

    @Inject
    Handover handover;

    @AroundInvoke
    Object guard(InvocationContext ctx) throws Exception {
        if (!runtime.enabled()) {
            return ctx.proceed();
        }
        GuardedMethod method = extension.method(ctx.getMethod());
        Object[] args = ctx.getParameters();
        Dispatch posted = method.dispatch(args, handover);
        MessageTracing.Span span = posted.process();
        try {
            return guarded(ctx, method, args, posted);
        } catch (Throwable e) {
            span.failed(e);
            throw e;
        } finally {
            span.end();
        }
    }

    private Object guarded(InvocationContext ctx, GuardedMethod method, Object[] args, Dispatch posted) throws Exception {
        Watched dispatch = method.incoming() && posted.settlesFromDecision() ? new Watched(posted) : null;
        Object result;
        try {
            result = runtime.engine().guard(method.settings(), dispatch != null ? dispatch : posted,
                    method.parameterKey(args), ctx::proceed);
        } catch (MessageRefusedException refused) {
            if (dispatch != null && dispatch.refused()) {
                // Reactive Messaging logs every exception of an @Incoming method as an error with its
                // stack trace (SRMSG00200), though a refusal is a routine outcome: the connector was
                // told and settles the delivery from the decision when it is acked (requeue or
                // dead-letter, never an ack). Only for the refusal reported for this very delivery.
                return method.skippedResult();
            }
            if (method.jms()) {
                // Rolled back for redelivery (thrown), or moved to the dead-letter queue in the
                // listener's transaction, which then commits the receipt with the move.
                runtime.jmsRefusals(method).settle((JmsMessageView) posted.message(), refused);
                return method.skippedResult();
            }
            throw refused;
        }
        // The engine returns null for a skipped duplicate; a primitive return type needs its zero instead.
        return result == null ? method.skippedResult() : result;
    }

    /** The connector's dispatch, with the decision the guard reported to it kept for the interceptor. */
    private static final class Watched implements Dispatch {
        private final Dispatch connector;
        private volatile GuardEvent decision;

        Watched(Dispatch connector) {
            this.connector = connector;
        }

        @Override
        public MessageView message() {
            return connector.message();
        }

        @Override
        public void decided(GuardEvent event) {
            decision = event;
            connector.decided(event);
        }

        @Override
        public boolean settlesFromDecision() {
            return true;
        }

        // Claims taken ahead belong to the connector's deliveries: a wrapper that kept them would
        // hide them from the guard, and from the connector that abandons them.
        @Override
        public List<? extends Dispatch> claimAheadWith() {
            return connector.claimAheadWith();
        }

        @Override
        public void holdAheadClaim(AheadClaim claim) {
            connector.holdAheadClaim(claim);
        }

        @Override
        public AheadClaim aheadClaim() {
            return connector.aheadClaim();
        }

        @Override
        public MessageTracing.Span process() {
            return connector.process();
        }

        boolean refused() {
            GuardEvent d = decision;
            return d != null && d.outcome().isRefusal();
        }
    }
}
