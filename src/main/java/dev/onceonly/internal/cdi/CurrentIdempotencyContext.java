package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.internal.support.CurrentKey;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Optional;
import java.util.OptionalLong;

/** The injectable {@link IdempotencyContext}: the key and fence the engine made current for the running handler. */
@ApplicationScoped
public class CurrentIdempotencyContext implements IdempotencyContext {

    @Override
    public Optional<String> key() {
        return Optional.ofNullable(CurrentKey.get());
    }

    @Override
    public OptionalLong fence() {
        long fence = CurrentKey.fence();
        return fence > 0 ? OptionalLong.of(fence) : OptionalLong.empty();
    }
}
