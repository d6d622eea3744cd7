package dev.onceonly.internal.engine;

import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.internal.support.LogId;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The guard for the messages of a batch ({@link GuardEngine#guardAll}): each message is decided as
 * {@link GuardEngine#guard} decides it alone, with the round trips and the transaction shared.
 * <ol>
 *   <li>Each key is derived: a key that cannot be is {@code REJECTED}; a key an earlier message of
 *       the batch has is {@code BUSY} (it comes again, and finds the first one decided).</li>
 *   <li>All keys are claimed in one call ({@link BatchClaimStore#claimAll}: one round trip on
 *       Redis); done and in-progress keys are decided at once, as alone. A failed or suspended store
 *       applies the consumer's store-failure policy to each.</li>
 *   <li>The new messages run in one transaction ({@link BatchCall}): their ledger rows in one
 *       {@link dev.onceonly.spi.Ledger#insertAll}, the handler once with all of them, one commit;
 *       their done marks are then queued together (ledger on, written in one round trip after the
 *       acknowledgement) or written one by one.</li>
 *   <li>A message the batch cannot decide for itself (its ledger row refused, its claim lost before
 *       the commit) rolls the batch back; the others run again together. One refused by the ledger
 *       is decided alone, on the single message's path; one whose claim was lost never runs again
 *       (another holder may be running it): it is refused {@code RETRY}, as alone when its commit
 *       is refused.</li>
 *   <li>A handler failure (an exception or an {@link Error}, or a failed commit) rolls the batch
 *       back and splits it in halves, each run in a transaction of its own, down to single
 *       messages, which are decided as alone: a poison message gets its own {@code FAILED} (its
 *       retries, its dead letter), the others commit once.</li>
 * </ol>
 * Every claim stays held, its lease renewed, across the reruns, and is finalised once.
 */
final class BatchGuard {

    private final GuardEngine engine;
    private final KeyDeriver keys;
    /** The store the batch claims through (the done marks queued meanwhile may ride along). */
    private final BatchClaimStore claims;

    BatchGuard(GuardEngine engine, KeyDeriver keys, BatchClaimStore claims) {
        this.engine = engine;
        this.keys = keys;
        this.claims = claims;
    }

    /** One message of a batch on its way through the guard: its position in the batch, key and claim. */
    static final class Element {
        final int position;
        final MessageKey key;
        final String token = Tokens.next();
        /** {@code null} when it runs unclaimed (the store failed or is suspended, and the ledger decides). */
        HeldClaim held;

        Element(int position, MessageKey key) {
            this.position = position;
            this.key = key;
        }
    }

    <T> List<Decision<T>> guardAll(ConsumerSettings s, List<? extends Dispatch> dispatches, BatchWork<T> handler) {
        long start = System.nanoTime();
        List<Decision<T>> decisions = new ArrayList<>(Collections.nCopies(dispatches.size(), null));
        List<Element> fresh = new ArrayList<>(dispatches.size());
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < dispatches.size(); i++) {
            MessageKey key;
            try {
                key = keys.derive(s, dispatches.get(i).message(), null);
            } catch (KeyRejectedException e) {
                LogId.ONCE0302W.log(s.consumer(), e.getMessage());
                decisions.set(i, engine.refuse(s, Outcome.REJECTED, Layer.NONE, "", e.getMessage(), start, e));
                continue;
            }
            if (!seen.add(key.storeKey())) {
                decisions.set(i, engine.refuse(s, Outcome.BUSY, Layer.NONE, key.digest(),
                        "an earlier message of its batch has the same key", start, null));
                continue;
            }
            fresh.add(new Element(i, key));
        }
        run(s, claim(s, fresh, start, decisions), handler, start, decisions);
        return decisions;
    }

    /**
     * Claims the keys in one call and decides those that need not run; {@return the others, each
     * {@linkplain GuardEngine#started started} with its claim held}
     */
    private <T> List<Element> claim(ConsumerSettings s, List<Element> fresh, long start, List<Decision<T>> decisions) {
        List<ClaimResult> results = null;
        ClaimStoreException failure = null;
        if (!fresh.isEmpty() && !engine.suspended.get()) {
            List<BatchClaimStore.ClaimRequest> requests = new ArrayList<>(fresh.size());
            for (Element e : fresh) {
                requests.add(new BatchClaimStore.ClaimRequest(e.key.storeKey(), e.token, e.key.fingerprint(), s.lease()));
            }
            GuardListener.Phase phase = engine.listener.startPhase(s.consumer(), "claim");
            try {
                results = claims.claimAll(requests);
            } catch (ClaimStoreException e) {
                engine.listener.onStoreError(s.consumer(), "claim");
                failure = e;
                releaseQuietly(requests);
            } finally {
                phase.end();
            }
        }
        List<Element> acquired = new ArrayList<>(fresh.size());
        for (int i = 0; i < fresh.size(); i++) {
            Element e = fresh.get(i);
            Decision<T> refused = results == null ? engine.withoutStore(s, e.key, start, failure)
                    : engine.refusedByClaim(s, e.key, results.get(i), start);
            if (refused != null) {
                decisions.set(e.position, refused);
                continue;
            }
            e.held = results == null ? null : new HeldClaim(engine.holders, s, e.key, e.token, results.get(i).fence(), start);
            engine.started(e.held);
            acquired.add(e);
        }
        return acquired;
    }

    /**
     * Runs {@code elements} together, and decides each (see the class contract). A message whose
     * claim was found lost (taken over before a commit, or by a renewal) does not run again: another
     * holder may be running it. It is refused {@code RETRY}, as alone when its commit is refused.
     */
    private <T> void run(ConsumerSettings s, List<Element> all, BatchWork<T> handler, long start,
                         List<Decision<T>> decisions) {
        List<Element> elements = new ArrayList<>(all.size());
        for (Element e : all) {
            if (e.held != null && e.held.lost()) {
                decisions.set(e.position, notRunWithoutClaim(s, e, start));
            } else {
                elements.add(e);
            }
        }
        if (elements.isEmpty()) {
            return;
        }
        if (elements.size() == 1) {
            Element e = elements.get(0);
            List<Integer> alone = List.of(e.position);
            decisions.set(e.position, engine.runAlone(s, e.key, e.held, start, () -> handler.call(alone)));
            return;
        }
        BatchCall<T> call = new BatchCall<>(engine, s, elements, handler, start);
        T result = null;
        Throwable thrown = null;
        try {
            result = engine.transactions.run(call, call);
        } catch (Exception | Error e) {
            // An Error is a handler failure like any other: split down to its message, whose decision
            // carries it. Not caught, it left every claim of the batch held and renewed for good.
            thrown = e;
        }
        switch (call.ended(result, thrown, decisions)) {
            case DECIDED -> { }
            case SINGLE_OUT -> {
                List<Element> rest = new ArrayList<>(elements);
                for (Element e : call.singledOut()) {
                    rest.remove(e);
                    run(s, List.of(e), handler, start, decisions);
                }
                run(s, rest, handler, start, decisions);
            }
            case SPLIT -> {
                int half = elements.size() / 2;
                run(s, elements.subList(0, half), handler, start, decisions);
                run(s, elements.subList(half, elements.size()), handler, start, decisions);
            }
        }
    }

    /** A message whose claim was lost: released if still ours after all, and refused {@code RETRY} (not an attempt). */
    private <T> Decision<T> notRunWithoutClaim(ConsumerSettings s, Element e, long start) {
        e.held.letGo();
        engine.finaliser.release(e.held);
        return engine.refuse(s, Outcome.RETRY, Layer.CLAIM_STORE, e.key.digest(),
                "the claim was lost before the batch ran the message again", start, null);
    }

    /** After a failed {@link BatchClaimStore#claimAll}: a key it took anyway is ours, and nobody would use it. */
    private void releaseQuietly(List<BatchClaimStore.ClaimRequest> requests) {
        try {
            for (BatchClaimStore.ClaimRequest r : requests) {
                engine.store.release(r.key(), r.token());
            }
        } catch (ClaimStoreException e) {
            // Still failing: what it took runs out with its lease.
        }
    }
}
