package dev.onceonly.internal.engine;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;

import java.util.ArrayList;
import java.util.List;

/**
 * Claim-ahead, beside the guard's main path: when a connector offers the deliveries it will hand
 * over next ({@link Dispatch#claimAhead}, {@link ClaimAheadSlot#behind}), their keys are claimed in
 * the round trip of the current one, and each delivery keeps its {@link ClaimedAhead} claim until the guard
 * {@linkplain #take takes} it in that message's turn or the connector abandons it. The guard's path
 * is the same either way: a claim taken ahead is a claim it need not ask the store for.
 */
final class ClaimAhead {

    private final KeyDeriver keys;
    /** Sends the claims in one call (the done marks queued meanwhile may ride along). */
    private final BatchClaimStore claims;
    /** What the claims taken ahead work with while their deliveries wait. */
    private final HolderContext holders;

    ClaimAhead(KeyDeriver keys, BatchClaimStore claims, HolderContext holders) {
        this.keys = keys;
        this.claims = claims;
        this.holders = holders;
    }

    /**
     * Claims, with the key of {@code dispatch} (unless it holds a claim already), those of the
     * deliveries the connector will hand over after it; does nothing when it offers none.
     */
    void withThoseBehind(ConsumerSettings settings, Dispatch dispatch) {
        ClaimAheadSlot slot = dispatch.claimAhead();
        if (slot == null || slot.held() != null) {
            return;
        }
        List<? extends ClaimAheadSlot> behind = slot.behind();
        if (!behind.isEmpty()) {
            List<ClaimAheadSlot> batch = new ArrayList<>(behind.size() + 1);
            batch.add(slot);
            batch.addAll(behind);
            claimAll(settings, batch);
        }
    }

    /**
     * {@return the claim taken ahead for this message, now the guard's; {@code null} when there is
     * none or it cannot be used (another consumer's, another key, lost or lapsed: then given back)}
     */
    ClaimedAhead take(ConsumerSettings settings, Dispatch dispatch, MessageKey key) {
        ClaimAheadSlot slot = dispatch.claimAhead();
        return slot != null && slot.held() instanceof ClaimedAhead c && c.take(settings, key) ? c : null;
    }

    /**
     * Claims the keys of a delivery and of those the connector will hand over after it
     * ({@link ClaimAheadSlot#behind}) in one call to the store ({@link BatchClaimStore#claimAll}: one
     * round trip on Redis), and gives each slot its claim ({@link ClaimAheadSlot#hold}):
     * each is then guarded without a round trip of its own. Only acquired and done answers are kept:
     * an in-progress one may be over by the message's turn. Fencing and leases are those of any
     * claim: the token is the message's, the lease is renewed while the delivery waits, and a claim
     * the guard does not take (the delivery was settled otherwise) is released by
     * {@link ClaimAheadSlot.Claim#abandon}.
     *
     * <p>Skips slots that hold a claim, keys that cannot be derived (refused in their turn, with
     * the reason), and everything when the store fails (any of those keys that it took anyway is
     * released here, or runs out with its lease): each message is then claimed in its turn.
     */
    private void claimAll(ConsumerSettings settings, List<? extends ClaimAheadSlot> slots) {
        List<ClaimAheadSlot> targets = new ArrayList<>(slots.size());
        List<MessageKey> messageKeys = new ArrayList<>(slots.size());
        List<BatchClaimStore.ClaimRequest> requests = new ArrayList<>(slots.size());
        for (ClaimAheadSlot d : slots) {
            if (d.held() != null) {
                continue;
            }
            MessageKey key;
            try {
                key = keys.derive(settings, d.message(), null);
            } catch (RuntimeException e) {
                // Refused (or failed) in that delivery's own turn, with its reason: whatever a
                // neighbour's bytes make key derivation throw never fails the message in front.
                continue;
            }
            targets.add(d);
            messageKeys.add(key);
            requests.add(new BatchClaimStore.ClaimRequest(key.storeKey(), Tokens.next(), key.fingerprint(), settings.lease()));
        }
        if (requests.isEmpty()) {
            return;
        }
        List<ClaimResult> results;
        GuardListener.Phase phase = holders.listener().startPhase(settings.consumer(), "claim-ahead");
        long sentAt = holders.leases().now(); // the leases the store grants run from later than this
        try {
            results = claims.claimAll(requests);
        } catch (ClaimStoreException e) {
            holders.listener().onStoreError(settings.consumer(), "claim");
            releaseQuietly(requests);
            return;
        } finally {
            phase.end();
        }
        for (int i = 0; i < targets.size(); i++) {
            ClaimResult result = results.get(i);
            if (result.state() == ClaimState.IN_PROGRESS) {
                continue;
            }
            ClaimedAhead claim = new ClaimedAhead(holders, settings, messageKeys.get(i), requests.get(i).token(), result, sentAt);
            if (!targets.get(i).hold(claim)) {
                claim.abandon(); // a slot that keeps no claim would leave it held until its lease ends
            }
        }
    }

    /** After a failed {@link BatchClaimStore#claimAll}: a key it took anyway is ours, and nobody would use it. */
    private void releaseQuietly(List<BatchClaimStore.ClaimRequest> requests) {
        try {
            for (BatchClaimStore.ClaimRequest r : requests) {
                holders.store().release(r.key(), r.token());
            }
        } catch (ClaimStoreException e) {
            // Still failing: what it took runs out with its lease.
        }
    }
}
