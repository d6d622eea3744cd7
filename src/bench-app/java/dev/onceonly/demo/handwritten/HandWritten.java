package dev.onceonly.demo.handwritten;

import dev.onceonly.demo.inventory.Measured;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The load benchmark's floor: the demo's inventory consumer as a team would protect it by hand,
 * without OnceOnly, so that the load run can compare OnceOnly with it side by side. Compiled into the
 * benchmark's WAR only (profile {@code bench}); the demo never sees it.
 *
 * <p>{@code BENCH_HAND_WRITTEN} ({@code bench.hand-written}) chooses:
 * <ul>
 * <li>{@code seed}: the seed article's consumer ({@link SeedGuard}), run with OnceOnly's guard
 *     switched off ({@code onceonly.enabled=false});</li>
 * <li>{@code direct}: the guarded consumer that publishes its {@code order.reserved} event itself,
 *     with a publisher confirm, instead of through the outbox ({@link DirectPublisher});</li>
 * <li>{@code off} (the default): nothing, the demo as shipped.</li>
 * </ul>
 *
 * <p>It binds to {@link Measured}, the one interceptor binding of the consumer's method, so the demo
 * stays as users copy it. Its priority puts it inside {@code @Transactional} (PLATFORM_BEFORE + 200),
 * so the insert and the handler's work commit together, as the hand-written consumer would have them.
 */
@Measured
@Interceptor
@Priority(Interceptor.Priority.APPLICATION)
public class HandWritten {

    @Inject
    @ConfigProperty(name = "bench.hand-written", defaultValue = "off")
    String mode;

    @Inject
    SeedGuard seed;

    @Inject
    DirectPublisher direct;

    @AroundInvoke
    Object around(InvocationContext ctx) throws Exception {
        switch (mode) {
            case "off":
                return ctx.proceed();
            case "seed":
                return seed.firstTime(delivery(ctx)) ? ctx.proceed() : null;
            case "direct":
                Object result = ctx.proceed();
                direct.publishReserved((String) ctx.getParameters()[0]);
                return result;
            default:
                throw new IllegalStateException("bench.hand-written must be off, seed or direct, not " + mode);
        }
    }

    private static IncomingRabbitMetadata delivery(InvocationContext ctx) {
        for (Object p : ctx.getParameters()) {
            if (p instanceof IncomingRabbitMetadata m) {
                return m;
            }
        }
        throw new IllegalStateException(ctx.getMethod() + " has no IncomingRabbitMetadata parameter");
    }
}
