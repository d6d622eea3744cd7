package dev.onceonly.testing;

import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.Decision;
import dev.onceonly.internal.engine.GuardEngine;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.TransactionRunner;

/**
 * A guarded call the way a caller with no other channel sees it: the engine's decision handed to the
 * dispatch (final ones only, as the interceptor does), then returned or thrown
 * ({@link Decision#resultOrThrow()}).
 */
public final class Guarded {

    private Guarded() {
    }

    public static <T> T call(GuardEngine engine, ConsumerSettings settings, Dispatch dispatch, Object parameterKey,
                             TransactionRunner.Work<T> handler) throws Exception {
        Decision<T> decision = engine.guard(settings, dispatch, parameterKey, handler);
        if (!decision.pending()) {
            dispatch.decided(decision.event());
        }
        return decision.resultOrThrow();
    }
}
