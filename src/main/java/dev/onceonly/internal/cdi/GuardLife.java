package dev.onceonly.internal.cdi;

import java.util.Optional;

/**
 * What liveness reads of the guard: whether it started, and on which claim store. Kept apart from
 * {@link OnceOnlyRuntime}, which implements it, so the health checks need nothing of the wiring.
 */
interface GuardLife {

    /** {@return the name of the claim store the guard started on, or empty before it started} */
    Optional<String> storeName();
}
