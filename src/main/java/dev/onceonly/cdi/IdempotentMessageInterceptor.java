package dev.onceonly.cdi;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.spi.Handover;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

/**
 * Thin adapter from CDI to {@link dev.onceonly.engine.GuardEngine}. Its priority puts it OUTSIDE
 * {@code @Transactional} (PLATFORM_BEFORE + 200): the claim is taken before the transaction begins
 * and finalised after it completed, so even a commit that fails at the very end releases it.
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
        Object result = runtime.engine().guard(method.settings(), method.dispatch(args, handover),
                method.parameterKey(args), ctx::proceed);
        // The engine returns null for a skipped duplicate; a primitive return type needs its zero instead.
        return result == null ? method.skippedResult() : result;
    }
}
