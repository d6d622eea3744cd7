package dev.onceonly.internal.engine;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;

import java.util.concurrent.TimeUnit;

/**
 * The claim one guarded call holds, from its claim until it is finalised: its token, its lease
 * (renewed by the {@link LeaseSweep} while held) and the holder's answers of the context.store(). A lost
 * lease is reported once, whichever operation finds out.
 */
final class HeldClaim implements LeaseSweep.Lease {

    private final HolderContext context;
    final ConsumerSettings settings;
    final MessageKey key;
    final String token;
    /** The claim's fencing token, the handler's to pass on; 0 when the store gave none. */
    final long fence;
    private final long start;
    /** When the lease is due for renewal ({@link LeaseSweep#now()}). */
    private volatile long renewAtNanos;
    private volatile boolean leaseLost;
    /** Set once the call holding it was counted finished ({@link Finaliser}); the paths that end it never run at once. */
    volatile boolean finished;

    HeldClaim(HolderContext context, ConsumerSettings settings, MessageKey key, String token, long fence, long start) {
        this.context = context;
        this.settings = settings;
        this.key = key;
        this.token = token;
        this.fence = fence;
        this.start = start;
    }

    /** Hands the lease to the renewal sweep until {@link #letGo}. */
    void hold() {
        renewAtNanos = context.leases().now() + settings.lease().toNanos() / 3;
        context.leases().hold(this, settings.lease());
    }

    /** Stops renewing the lease. */
    void letGo() {
        context.leases().drop(this);
    }

    @Override
    public long renewAtNanos() {
        return renewAtNanos;
    }

    @Override
    public String consumer() {
        return settings.consumer();
    }

    @Override
    public String keyDigest() {
        return key.digest();
    }

    /** One lease renewal, by the sweep. A lost lease is reported once and no longer renewed. */
    @Override
    public void renew(long now) {
        try {
            if (context.store().extend(key.storeKey(), token, settings.lease()) == HolderResult.APPLIED) {
                renewAtNanos = now + settings.lease().toNanos() / 3;
                context.listener().onLeaseRenewed(settings.consumer());
            } else if (context.leases().drop(this)) { // not let go by the finalisation meanwhile: really lost
                leaseLost = true;
                context.listener().onLeaseLost(settings.consumer());
                LogId.ONCE0201W.log(settings.consumer(), key.digest(), elapsedMillis(), Durations.format(settings.lease()));
            }
        } catch (ClaimStoreException e) {
            context.listener().onStoreError(settings.consumer(), "extend");
            LogId.ONCE0202W.log(settings.consumer(), key.digest(), e.getCause(), context.leases().periodMillis());
        }
    }

    /**
     * Proves, before the commit, that the claim is still held (or re-takes it when nobody holds it).
     *
     * @return {@code null} when it is ours; else why the commit must be refused (logged, lease reported lost)
     */
    String confirmBeforeCommit() {
        try {
            if (context.store().extend(key.storeKey(), token, settings.lease()) == HolderResult.APPLIED) {
                return null;
            }
            // Not held by us: if nobody holds it (the store lost it), it is ours again.
            if (context.store().claim(key.storeKey(), token, key.fingerprint(), settings.lease()).state() == ClaimState.ACQUIRED) {
                LogId.ONCE0105I.log(settings.consumer(), key.digest(), elapsedMillis());
                return null;
            }
            return refuseCommit("the claim was taken over before commit");
        } catch (ClaimStoreException e) {
            context.listener().onStoreError(settings.consumer(), "extend");
            return refuseCommit("the claim store could not confirm the claim before commit");
        }
    }

    /**
     * {@return whether the claim was found not ours any more (a renewal, the check before a commit):
     * work not started yet must not start on it}
     */
    boolean lost() {
        return leaseLost;
    }

    private String refuseCommit(String reason) {
        reportLost();
        LogId.ONCE0104W.log(settings.consumer(), key.digest(), elapsedMillis(), reason);
        return reason;
    }

    private void reportLost() {
        if (!leaseLost) {
            leaseLost = true;
            context.listener().onLeaseLost(settings.consumer());
        }
    }

    /** The store answered {@code operation} for this holder: a claim found not ours is reported once. */
    void answered(String operation, HolderResult r) {
        if (r == HolderResult.NOT_HOLDER && !leaseLost) {
            reportLost();
            LogId.ONCE0103W.log(settings.consumer(), key.digest(), operation, elapsedMillis(), Durations.format(settings.lease()));
        }
    }

    /**
     * Marks the key done. If the claim is no longer ours but nobody holds it (its lease ran out, or
     * the store lost it), it is taken again and marked: the effect committed, so it is done.
     *
     * @param retried after an attempt that failed: a key found done with this message's fingerprint
     *                is then taken as done, most likely by that attempt (its reply was lost), not as
     *                a lost lease
     * @throws ClaimStoreException when the store failed
     */
    HolderResult completeOrTakeAgain(boolean retried) {
        HolderResult r = context.store().complete(key.storeKey(), token, key.fingerprint(), settings.retention());
        if (r == HolderResult.APPLIED) {
            return r;
        }
        ClaimResult again = context.store().claim(key.storeKey(), token, key.fingerprint(), settings.lease());
        if (again.state() == ClaimState.ACQUIRED) {
            return context.store().complete(key.storeKey(), token, key.fingerprint(), settings.retention());
        }
        return retried && again.state() == ClaimState.DONE && key.matches(again.fingerprint()) ? HolderResult.APPLIED : r;
    }

    /** @throws ClaimStoreException when the store failed */
    HolderResult release() {
        return context.store().release(key.storeKey(), token);
    }

    /** {@return the completion as a request, for a batch} */
    BatchClaimStore.CompleteRequest completeRequest() {
        return new BatchClaimStore.CompleteRequest(key.storeKey(), token, key.fingerprint(), settings.retention());
    }

    long elapsedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
