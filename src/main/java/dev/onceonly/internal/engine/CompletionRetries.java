package dev.onceonly.internal.engine;

import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Completions the store failed after a commit, retried off the consumer's thread every sixth of
 * their lease for {@value #LEASES} leases: without the done mark a copy published later would run
 * again (or stop only at the ledger). A retry that lands, finds the key taken, or runs out of time
 * hands the claim to {@code finished}; the {@link Finaliser} owns the rest of its life.
 */
final class CompletionRetries {

    /** How long a failed completion is retried, in leases. */
    static final int LEASES = 10;

    private final LeaseSweep sweep;
    private final GuardListener listener;
    private final Consumer<HeldClaim> finished;

    CompletionRetries(ScheduledExecutorService scheduler, LongSupplier nanoClock, GuardListener listener,
                      Consumer<HeldClaim> finished) {
        this.sweep = new LeaseSweep(scheduler, nanoClock);
        this.listener = listener;
        this.finished = finished;
    }

    /** Holds the claim for retries; {@code e} is the failure that left it unmarked. */
    void retryLater(HeldClaim claim, ClaimStoreException e) {
        claim.letGo();
        long window = claim.settings.lease().toNanos() * LEASES;
        sweep.hold(new RetriedCompletion(claim, sweep.now() + window), claim.settings.lease());
        LogId.ONCE0106W.log(claim.settings.consumer(), claim.key.digest(), e.getCause(), sweep.periodMillis(),
                Durations.format(claim.settings.lease().multipliedBy(LEASES)));
    }

    /** {@return how many completions are being retried now (a read for checks, no decision)} */
    int retrying() {
        return sweep.held();
    }

    /** Stops retrying; claims still held are left to their leases. */
    void stop() {
        sweep.stop();
    }

    /** A completion the store failed, retried every sixth of the lease until its deadline. */
    private final class RetriedCompletion implements LeaseSweep.Lease {
        private final HeldClaim claim;
        private final long untilNanos;

        RetriedCompletion(HeldClaim claim, long untilNanos) {
            this.claim = claim;
            this.untilNanos = untilNanos;
        }

        @Override
        public long renewAtNanos() {
            return Long.MIN_VALUE / 2; // due at every sweep
        }

        @Override
        public void renew(long now) {
            ConsumerSettings s = claim.settings;
            try {
                HolderResult r = claim.completeOrTakeAgain(true);
                sweep.drop(this);
                if (r == HolderResult.APPLIED) {
                    LogId.ONCE0108I.log(s.consumer(), claim.key.digest(), claim.elapsedMillis());
                } else {
                    LogId.ONCE0103W.log(s.consumer(), claim.key.digest(), "complete", claim.elapsedMillis(), Durations.format(s.lease()));
                }
                finished.accept(claim);
            } catch (ClaimStoreException e) {
                listener.onStoreError(s.consumer(), "complete");
                if (now - untilNanos >= 0) {
                    sweep.drop(this);
                    LogId.ONCE0107W.log(s.consumer(), claim.key.digest(), Durations.format(s.lease().multipliedBy(LEASES)));
                    finished.accept(claim);
                }
            }
        }

        @Override
        public String consumer() {
            return claim.settings.consumer();
        }

        @Override
        public String keyDigest() {
            return claim.key.digest();
        }
    }
}
