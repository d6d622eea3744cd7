package dev.onceonly.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A {@link ClaimStore} that can also take several keys in one call: optional, for a store that does
 * better than calling its primitives one after the other (Redis pipelines them in one round trip).
 * A store that cannot implements only {@link ClaimStore}; callers that batch take {@link #of} it,
 * which loops over its primitives.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>The four primitives are those of {@link ClaimStore}, with its whole contract.</li>
 *   <li>{@link #claimAll} and {@link #completeAll} answer, per request and in request order, what
 *       {@link #claim} and {@link #complete} calls one after the other would, and leave the same
 *       states. A key requested more than once is decided in request order.</li>
 *   <li>Each key is decided atomically, as by its primitive; nothing is atomic across keys: other
 *       callers may act on one key of a batch between two others.</li>
 *   <li>{@link #completeThenClaim} decides every completion before any claim (a key both completed
 *       and claimed is found done).</li>
 *   <li>A batch that throws {@link ClaimStoreException} answered none of its requests, but any of
 *       them may have been applied: see each method.</li>
 *   <li>{@link #completesWithClaims} says whether {@link #completeThenClaim} adds no wait to its
 *       claims; callers rely on it only for speed, never for correctness.</li>
 * </ul>
 */
public interface BatchClaimStore extends ClaimStore {

    /**
     * Claims several keys, each exactly as {@link #claim} would, in one round trip where the store
     * can. A key requested more than once answers as that many {@link #claim} calls in a row.
     *
     * <p>When it throws, any of the keys may have been taken by its request's token. The caller
     * releases them ({@link #release} with a token that does not hold the key changes nothing, so
     * releasing all of them is safe) or lets their leases run out.
     *
     * @param requests the claims, each with its own token
     * @return one answer per request, in the order of {@code requests}
     * @throws ClaimStoreException when the store could not answer for every key
     */
    List<ClaimResult> claimAll(List<ClaimRequest> requests);

    /**
     * Completes several keys, each exactly as {@link #complete} would, in one round trip where the
     * store can. A key requested more than once answers as that many {@link #complete} calls in a
     * row (after one applied, the others answer {@link HolderResult#NOT_HOLDER}).
     *
     * <p>When it throws, any of the keys may have been marked done. A caller that retries one of
     * them may then get {@link HolderResult#NOT_HOLDER} for a key that is done with its own
     * fingerprint: {@link #claim} then answers {@link ClaimState#DONE} with that fingerprint.
     *
     * @param requests the completions, each with the token that holds its key
     * @return one answer per request, in the order of {@code requests}
     * @throws ClaimStoreException when the store could not answer for every key
     */
    List<HolderResult> completeAll(List<CompleteRequest> requests);

    /**
     * Completes {@code completions}, then claims {@code claims}: each as {@link #completeAll} and
     * {@link #claimAll} would, all completions decided before any claim. A store that
     * {@link #completesWithClaims} sends both in the claims' round trip.
     *
     * <p>When it throws, any of the completions may have been applied and any of the claims taken,
     * as after a failed {@link #completeAll} or {@link #claimAll} (see there).
     *
     * @param completions the completions, each with the token that holds its key; may be empty
     * @param claims      the claims, each with its own token; may be empty
     * @return one answer per request of each list, in the order of its list
     * @throws ClaimStoreException when the store could not answer for every request
     */
    Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims);

    /**
     * {@return whether {@link #completeThenClaim} costs no more wait than {@link #claimAll} of its
     * claims alone (one round trip for both, or none at all), so that a caller may send queued
     * completions with the claims it has to wait for anyway}
     */
    boolean completesWithClaims();

    /**
     * The answers of {@link #completeThenClaim}.
     *
     * @param completions one per completion, in request order
     * @param claims      one per claim, in request order
     */
    record Answers(List<HolderResult> completions, List<ClaimResult> claims) {
    }

    /**
     * One claim of {@link #claimAll}: the arguments of {@link #claim}.
     *
     * @param key         the message key
     * @param token       the caller's random holder token
     * @param fingerprint stored with the key
     * @param lease       how long the key stays in progress unless extended
     */
    record ClaimRequest(String key, String token, String fingerprint, Duration lease) {
    }

    /**
     * One completion of {@link #completeAll}: the arguments of {@link #complete}.
     *
     * @param key         the message key
     * @param token       the caller's holder token
     * @param fingerprint stored with the done key
     * @param retention   how long the done key is remembered
     */
    record CompleteRequest(String key, String token, String fingerprint, Duration retention) {
    }

    /**
     * {@return {@code store} itself where it batches, else {@link #looping} over it}
     *
     * @param store any claim store
     */
    static BatchClaimStore of(ClaimStore store) {
        return store instanceof BatchClaimStore batches ? batches : looping(store);
    }

    /**
     * {@return the batches of a store that cannot do better: its primitives one after the other, each
     * its own round trip; it does not {@link #completesWithClaims}}
     *
     * @param store the store; closing the result closes it
     */
    static BatchClaimStore looping(ClaimStore store) {
        return loop(store, false);
    }

    /**
     * {@return the batches of a store in this JVM: its primitives one after the other, and it
     * {@link #completesWithClaims}, since there is no round trip for completions to add wait to}
     *
     * @param store the store; closing the result closes it
     */
    static BatchClaimStore inProcess(ClaimStore store) {
        return loop(store, true);
    }

    private static BatchClaimStore loop(ClaimStore store, boolean completesWithClaims) {
        return new BatchClaimStore() {
            @Override
            public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
                List<ClaimResult> results = new ArrayList<>(requests.size());
                for (ClaimRequest r : requests) {
                    results.add(store.claim(r.key(), r.token(), r.fingerprint(), r.lease()));
                }
                return results;
            }

            @Override
            public List<HolderResult> completeAll(List<CompleteRequest> requests) {
                List<HolderResult> results = new ArrayList<>(requests.size());
                for (CompleteRequest r : requests) {
                    results.add(store.complete(r.key(), r.token(), r.fingerprint(), r.retention()));
                }
                return results;
            }

            @Override
            public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
                List<HolderResult> completed = completeAll(completions);
                return new Answers(completed, claimAll(claims));
            }

            @Override
            public boolean completesWithClaims() {
                return completesWithClaims;
            }

            @Override
            public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
                return store.claim(key, token, fingerprint, lease);
            }

            @Override
            public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
                return store.complete(key, token, fingerprint, retention);
            }

            @Override
            public HolderResult release(String key, String token) {
                return store.release(key, token);
            }

            @Override
            public HolderResult extend(String key, String token, Duration lease) {
                return store.extend(key, token, lease);
            }

            @Override
            public String name() {
                return store.name();
            }

            @Override
            public Optional<String> problem() {
                return store.problem();
            }

            @Override
            public void close() {
                store.close();
            }
        };
    }
}
