package dev.onceonly.internal.cdi;

import dev.onceonly.internal.jta.NewTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import java.util.function.Supplier;

/** {@link NewTransaction} by the container's {@code @Transactional(REQUIRES_NEW)}: suspends the caller's transaction. */
@ApplicationScoped
public class RequiresNewTransaction implements NewTransaction {

    @Override
    @Transactional(Transactional.TxType.REQUIRES_NEW)
    public <T> T call(Supplier<T> work) {
        return work.get();
    }
}
