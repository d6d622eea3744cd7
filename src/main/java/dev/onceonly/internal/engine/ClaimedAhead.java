package dev.onceonly.internal.engine;

import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.internal.support.LogId;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A claim taken before the message's guarded method runs, with the claim of a delivery before it
 * ({@link ClaimAheadSlot#behind}), kept by its delivery's slot until the guard takes it
 * ({@link #take}) or the connector abandons it. While it waits, an acquired claim is renewed by the lease sweep like any other; a renewal that finds it
 * lost marks it so, and the guard then claims the message again in its turn.
 */
final class ClaimedAhead implements ClaimAheadSlot.Claim, LeaseSweep.Lease {

    private final HolderContext context;
    private final ConsumerSettings settings;
    final MessageKey key;
    final String token;
    /** {@link ClaimState#ACQUIRED} (held, renewed) or {@link ClaimState#DONE} (a duplicate, nothing held). */
    final ClaimResult result;
    /** Set once, by whichever comes first: the guard taking it, or the connector abandoning it. */
    private final AtomicBoolean over = new AtomicBoolean();
    private volatile boolean lost;
    private volatile long renewAtNanos;
    /**
     * When the request that last confirmed the lease was sent ({@link LeaseSweep#now()}): the store
     * counts the lease from later than that, so the claim is surely held until a lease after it.
     * Renewals the store failed leave it unchanged.
     */
    private volatile long confirmedAtNanos;

    /**
     * @param sentAt when the claim's request was sent ({@link LeaseSweep#now()})
     */
    ClaimedAhead(HolderContext context, ConsumerSettings settings, MessageKey key, String token, ClaimResult result,
                 long sentAt) {
        this.context = context;
        this.settings = settings;
        this.key = key;
        this.token = token;
        this.result = result;
        this.confirmedAtNanos = sentAt;
        if (result.state() == ClaimState.ACQUIRED) {
            renewAtNanos = context.leases().now() + settings.lease().toNanos() / 3;
            context.leases().hold(this, settings.lease());
        }
    }

    /**
     * The guard takes the claim for the message it is about to guard.
     *
     * @return whether the claim is this consumer's, for this key, and still held (or done): the guard
     *         then goes on with it; otherwise it is given back and the guard claims as usual. A claim
     *         no renewal confirmed for a whole lease (the store failed them) may have run out and be
     *         another holder's by now: it is not used either
     */
    boolean take(ConsumerSettings s, MessageKey k) {
        if (!over.compareAndSet(false, true)) {
            return false;
        }
        context.leases().drop(this);
        if (s.consumer().equals(settings.consumer()) && k.storeKey().equals(key.storeKey()) && !lost && !lapsed()) {
            return true;
        }
        release();
        return false;
    }

    private boolean lapsed() {
        return result.state() == ClaimState.ACQUIRED
                && context.leases().now() - confirmedAtNanos >= settings.lease().toNanos();
    }

    @Override
    public void abandon() {
        if (over.compareAndSet(false, true)) {
            context.leases().drop(this);
            release();
        }
    }

    private void release() {
        if (result.state() != ClaimState.ACQUIRED || lost) {
            return;
        }
        try {
            context.store().release(key.storeKey(), token);
        } catch (RuntimeException e) {
            // The store failed, or was closed at shutdown before the connector gave its deliveries
            // back: the claim runs out with its lease, and a redelivery is BUSY until then.
            context.listener().onStoreError(settings.consumer(), "release");
        }
    }

    @Override
    public long renewAtNanos() {
        return renewAtNanos;
    }

    @Override
    public void renew(long now) {
        try {
            if (context.store().extend(key.storeKey(), token, settings.lease()) == HolderResult.APPLIED) {
                confirmedAtNanos = now;
                renewAtNanos = now + settings.lease().toNanos() / 3;
            } else if (context.leases().drop(this)) {
                lost = true; // not ours any more: the guard claims again in the message's turn
            }
        } catch (ClaimStoreException e) {
            context.listener().onStoreError(settings.consumer(), "extend");
            LogId.ONCE0202W.log(settings.consumer(), key.digest(), e.getCause(), context.leases().periodMillis());
        }
    }

    @Override
    public String consumer() {
        return settings.consumer();
    }

    @Override
    public String keyDigest() {
        return key.digest();
    }
}
