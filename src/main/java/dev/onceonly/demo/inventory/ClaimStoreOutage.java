package dev.onceonly.demo.inventory;

import dev.onceonly.api.ClaimStoreControl;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A rehearsed claim-store outage for the page: suspends the claim store through the public
 * {@link ClaimStoreControl} for a while, so new orders follow the inventory consumer's
 * store-failure policy ({@code ledger-only}: the ledger alone catches duplicates), then resumes it.
 * A new outage while one runs extends it to the later end.
 */
@ApplicationScoped
public class ClaimStoreOutage {

    /** Longest outage the page may ask for. */
    static final Duration MAX = Duration.ofMinutes(5);

    @Inject
    ClaimStoreControl claimStore;

    @Resource
    ManagedScheduledExecutorService scheduler;

    private final Clock clock = Clock.systemUTC();
    private Instant endsAt;
    private ScheduledFuture<?> resume;

    /** Suspends the claim store for {@code length} (at most {@link #MAX}). */
    synchronized void start(Duration length) {
        Instant end = clock.instant().plus(length);
        if (endsAt != null && endsAt.isAfter(end)) {
            return;
        }
        if (resume != null) {
            resume.cancel(false);
        }
        claimStore.suspend();
        endsAt = end;
        resume = scheduler.schedule(this::end, length.toMillis(), TimeUnit.MILLISECONDS);
    }

    private synchronized void end() {
        claimStore.resume();
        endsAt = null;
        resume = null;
    }

    /** {@return seconds until the claim store is resumed; 0 when it is not suspended} */
    synchronized long secondsLeft() {
        if (!claimStore.suspended() || endsAt == null) {
            return 0;
        }
        return Math.max(1, Duration.between(clock.instant(), endsAt).toSeconds());
    }

    @PreDestroy
    synchronized void stop() {
        if (resume != null) {
            resume.cancel(false);
        }
    }
}
