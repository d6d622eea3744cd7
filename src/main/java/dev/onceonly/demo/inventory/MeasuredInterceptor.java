package dev.onceonly.demo.inventory;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

import java.util.List;

/**
 * Times calls of {@link Measured} methods, for {@code /api/stats} and the live page's chart. Its priority puts it outside OnceOnly's guard
 * (PLATFORM_BEFORE + 100) and {@code @Transactional} (PLATFORM_BEFORE + 200), so a call's time is
 * what the consumer costs per delivery: guard, transaction, commit and handler alike, and the same
 * span whether the guard is switched on or off. A batch method's call is timed once and counts
 * each message of its batch.
 */
@Measured
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_BEFORE + 50)
public class MeasuredInterceptor {

    @Inject
    ConsumerTimings timings;

    @Inject
    LiveFeed live;

    @AroundInvoke
    Object time(InvocationContext ctx) throws Exception {
        // A batch method's call returns (or throws) for each of its messages: counted here, before the
        // guard takes its duplicates out of the list.
        int messages = ctx.getParameters().length > 0 && ctx.getParameters()[0] instanceof List<?> batch ? batch.size() : 1;
        long start = System.nanoTime();
        boolean returned = false;
        try {
            Object result = ctx.proceed();
            returned = true;
            return result;
        } finally {
            long end = System.nanoTime();
            timings.call(start, end, returned, messages);
            live.call(end - start);
        }
    }
}
