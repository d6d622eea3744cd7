package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.internal.support.CurrentKey;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Optional;

/** The injectable {@link IdempotencyContext}: the key the engine made current for the running handler. */
@ApplicationScoped
public class CurrentIdempotencyContext implements IdempotencyContext {

    @Override
    public Optional<String> key() {
        return Optional.ofNullable(CurrentKey.get());
    }
}
