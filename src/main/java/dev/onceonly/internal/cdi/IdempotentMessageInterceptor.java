package dev.onceonly.internal.cdi;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.engine.Decision;
import dev.onceonly.internal.jms.JmsMessageView;
import dev.onceonly.internal.jms.JmsRefusals;
import dev.onceonly.internal.result.ResultKeeper;
import dev.onceonly.internal.support.LogId;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.spi.TransactionRunner;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import java.util.List;

/**
 * Thin adapter from CDI to {@link dev.onceonly.internal.engine.GuardEngine}. Its priority (PLATFORM_BEFORE
 * + 100) puts it OUTSIDE {@code @Transactional} (PLATFORM_BEFORE + 200): the claim is taken before the transaction begins
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
        if (method.batch()) {
            return guardedBatch(ctx, method, args);
        }
        Dispatch posted = method.dispatch(args, handover);
        MessageTracing.Span span = posted.process();
        try {
            return guarded(ctx, method, args, posted, span);
        } catch (Throwable e) {
            span.failed(e);
            throw e;
        } finally {
            span.end();
        }
    }

    /**
     * Translates the engine's one {@link Decision} for this call, once: a final decision goes to the
     * delivery (the connector settles from it), then the call returns or throws.
     */
    private Object guarded(InvocationContext ctx, GuardedMethod method, Object[] args, Dispatch posted,
                           MessageTracing.Span span) throws Exception {
        ResultKeeper keeper = method.results() == null ? null : runtime.results().keeper(method);
        TransactionRunner.Work<Object> handler = ctx::proceed;
        Decision<Object> decision = runtime.engine().guard(method.settings(), posted, method.parameterKey(args),
                keeper == null ? handler : keeper.keeping(handler));
        if (!decision.pending()) {
            posted.decided(decision.event(), decision.failure());
        }
        boolean failed = !decision.refused() && decision.outcome() == Outcome.FAILED;
        if ((decision.refused() || failed) && !decision.pending() && method.incoming() && posted.settlesFromDecision()) {
            // Reactive Messaging logs every exception of an @Incoming method as an error with its
            // stack trace (SRMSG00200), on every attempt, though a refusal is a routine outcome and a
            // failure one the connector handles: it has the decision and settles the delivery from it
            // (requeue, retry or dead-letter, never an ack), and logs one line per failed attempt.
            if (failed) {
                span.failed(decision.failure());
            }
            return method.skippedResult();
        }
        if (method.jms() && (decision.refused() || failed)) {
            // Rolled back for redelivery (the container's transaction marked rollback-only: an exception
            // would be logged by the container as an error with its incidents), or moved to the
            // dead-letter queue in the listener's transaction, which then commits the receipt with the move.
            JmsRefusals jms = runtime.jmsRefusals(method);
            if (failed) {
                jms.failed((JmsMessageView) posted.message(), decision.event(), decision.failure());
                span.failed(decision.failure());
            } else {
                jms.settle((JmsMessageView) posted.message(), decision.refusal());
            }
            return method.skippedResult();
        }
        if (failed) {
            GuardEvent e = decision.event();
            if (e.retryable()) {
                LogId.ONCE0303I.log(e.consumer(), e.keyDigest(), "transaction rolled back");
            } else {
                LogId.ONCE0304I.log(e.consumer(), e.keyDigest(), e.reason());
            }
        }
        Object result = decision.resultOrThrow();
        if (keeper != null) {
            // A duplicate gets the first call's stored result, if any; a call that ran, its own.
            result = decision.outcome() == Outcome.DUPLICATE
                    ? keeper.replay(runtime.results().key(method, posted, method.parameterKey(args))) : keeper.returned(result);
        }
        // Null for a skipped duplicate (with no stored result); a primitive return type needs its zero instead.
        return result == null ? method.skippedResult() : result;
    }

    /**
     * A batch: one decision per message, each handed to its own delivery, which its connector
     * settles from it. Without a connector's deliveries (no batch was posted), the call returns only
     * when every message was processed or a duplicate, else throws the first message's failure or
     * refusal, so that the caller's runtime takes the batch back.
     */
    private Object guardedBatch(InvocationContext ctx, GuardedMethod method, Object[] args) throws Exception {
        List<?> payloads = method.payloads(args);
        List<? extends Dispatch> posted = method.batchDispatches(payloads, handover);
        List<Decision<Object>> decisions = runtime.engine().guardAll(method.settings(), posted, positions -> {
            ctx.setParameters(method.withPayloads(args, payloads, positions));
            return ctx.proceed();
        });
        Throwable thrown = null;
        for (int i = 0; i < decisions.size(); i++) {
            Decision<Object> decision = decisions.get(i);
            Dispatch dispatch = posted.get(i);
            if (decision.pending()) {
                // Its transaction is the caller's, still open: nothing is final to hand over, a failure is thrown.
                thrown = thrown == null ? decision.failure() : thrown;
                continue;
            }
            dispatch.decided(decision.event(), decision.failure());
            boolean failed = !decision.refused() && decision.outcome() == Outcome.FAILED;
            if ((decision.refused() || failed) && !dispatch.settlesFromDecision() && thrown == null) {
                thrown = decision.refused() ? decision.refusal() : decision.failure();
            }
        }
        if (thrown != null) {
            throw Decision.rethrown(thrown);
        }
        return method.skippedResult();
    }
}
