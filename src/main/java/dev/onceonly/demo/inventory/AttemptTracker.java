package dev.onceonly.demo.inventory;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import jakarta.annotation.Priority;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

/**
 * Holds the attempt number of the delivery a {@link TracksAttempt} method is called for, for the
 * length of the call, so that the page can show it next to the guard's decision.
 *
 * <p>{@code GuardEvent} carries no attempt, and the consumer method's body never runs for a
 * duplicate, a busy or a rejected message, so only a step around the guard sees every delivery:
 * this interceptor's priority puts it outside OnceOnly's guard (PLATFORM_BEFORE + 100). The guard
 * reports synchronously on the calling thread (after the commit it began, for PROCESSED and
 * FAILED), inside this call, which is why a thread-local is enough.
 */
@TracksAttempt
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_BEFORE + 60)
public class AttemptTracker {

    private static final ThreadLocal<Integer> CURRENT = new ThreadLocal<>();

    /** {@return the attempt of the delivery being handled on this thread, or 0 outside such a call} */
    static int current() {
        Integer attempt = CURRENT.get();
        return attempt == null ? 0 : attempt;
    }

    @AroundInvoke
    Object track(InvocationContext ctx) throws Exception {
        IncomingRabbitMetadata meta = null;
        for (Object arg : ctx.getParameters()) {
            if (arg instanceof IncomingRabbitMetadata m) {
                meta = m;
            }
        }
        if (meta == null) {
            return ctx.proceed();
        }
        CURRENT.set(meta.attempt());
        try {
            return ctx.proceed();
        } finally {
            CURRENT.remove(); // pooled consumer threads must not carry it into the next call
        }
    }
}
