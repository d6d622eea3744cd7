package dev.onceonly.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A store of message claims: the fast, atomic first layer of the guard. Implementations offer
 * exactly these four primitives; every policy (what a state means, what to do when the store is
 * down) lives above them, in the engine.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>A key is either absent, <em>in progress</em> (held by one holder, identified by a random
 *       {@code token}, expiring after its lease) or <em>done</em> (expiring after its retention).</li>
 *   <li>Every primitive is atomic and linearizable per key: of any number of concurrent
 *       {@link #claim} calls on an absent key, exactly one answers {@link ClaimState#ACQUIRED}.</li>
 *   <li><b>Fencing:</b> {@link #complete}, {@link #release} and {@link #extend} act only while the
 *       key is in progress <em>with the caller's token</em>. A holder whose lease expired (and whose
 *       key may since have been claimed by someone else) gets {@link HolderResult#NOT_HOLDER} and
 *       changes nothing.</li>
 *   <li>{@code fingerprint} is an opaque short string the engine stores with the key and gets back
 *       with {@link ClaimState#DONE} and {@link ClaimState#IN_PROGRESS}, to detect the same key with
 *       a different body. It may be empty. It must not contain {@code '|'}.</li>
 *   <li>Durations are positive; stores keep at least millisecond precision.</li>
 *   <li>A store that cannot answer (connection lost, timeout) throws {@link ClaimStoreException};
 *       it never guesses.</li>
 *   <li>{@link #claimAll} and {@link #completeAll} are {@link #claim} and {@link #complete} for
 *       several keys at once, for stores that can send them in one round trip, and
 *       {@link #completeThenClaim} is both in one call. They are atomic per key, never across
 *       keys.</li>
 * </ul>
 */
public interface ClaimStore extends AutoCloseable {

    /**
     * Takes the key if it is absent: it becomes in progress, held by {@code token}, for {@code lease}.
     * If the key exists, nothing changes and the current state comes back.
     *
     * @param key the message key
     * @param token the caller's random holder token
     * @param fingerprint stored with the key, see the contract above
     * @param lease how long the key stays in progress unless extended
     * @return {@link ClaimState#ACQUIRED}; or {@link ClaimState#DONE} / {@link ClaimState#IN_PROGRESS}
     *         with the fingerprint stored with the key
     */
    ClaimResult claim(String key, String token, String fingerprint, Duration lease);

    /**
     * Marks the key done, to be remembered for {@code retention}, if {@code token} still holds it.
     * The done state stores {@code fingerprint}.
     *
     * @param key the message key
     * @param token the caller's holder token
     * @param fingerprint stored with the done key, see the contract above
     * @param retention how long the done key is remembered
     * @return {@link HolderResult#APPLIED}, or {@link HolderResult#NOT_HOLDER} when the token no
     *         longer holds the key
     */
    HolderResult complete(String key, String token, String fingerprint, Duration retention);

    /**
     * Deletes the key if {@code token} still holds it (the handler failed; a redelivery may claim it).
     *
     * @param key the message key
     * @param token the caller's holder token
     * @return {@link HolderResult#APPLIED}, or {@link HolderResult#NOT_HOLDER} when the token no
     *         longer holds the key
     */
    HolderResult release(String key, String token);

    /**
     * Renews the lease of an in-progress key to {@code lease} from now, if {@code token} still holds it.
     *
     * @param key the message key
     * @param token the caller's holder token
     * @param lease the new lease, from now
     * @return {@link HolderResult#APPLIED}, or {@link HolderResult#NOT_HOLDER} when the token no
     *         longer holds the key
     */
    HolderResult extend(String key, String token, Duration lease);

    /**
     * Claims several keys, each exactly as {@link #claim} would, in one round trip where the store
     * can. Not atomic across keys: each key is decided on its own. A key requested more than once is
     * decided in request order: its answers are those of as many {@link #claim} calls in a row.
     *
     * <p>When it throws, any of the keys may have been taken by its request's token. The caller
     * releases them ({@link #release} with a token that does not hold the key changes nothing, so
     * releasing all of them is safe) or lets their leases run out.
     *
     * @param requests the claims, each with its own token
     * @return one answer per request, in the order of {@code requests}
     * @throws ClaimStoreException when the store could not answer for every key
     */
    default List<ClaimResult> claimAll(List<ClaimRequest> requests) {
        List<ClaimResult> results = new ArrayList<>(requests.size());
        for (ClaimRequest r : requests) {
            results.add(claim(r.key(), r.token(), r.fingerprint(), r.lease()));
        }
        return results;
    }

    /**
     * Completes several keys, each exactly as {@link #complete} would, in one round trip where the
     * store can. Not atomic across keys. A key requested more than once is decided in request order,
     * as by {@link #complete} calls in a row (after one applied, the others answer {@link HolderResult#NOT_HOLDER}).
     *
     * <p>When it throws, any of the keys may have been marked done. A caller that retries one of
     * them may then get {@link HolderResult#NOT_HOLDER} for a key that is done with its own
     * fingerprint: {@link #claim} then answers {@link ClaimState#DONE} with that fingerprint.
     *
     * @param requests the completions, each with the token that holds its key
     * @return one answer per request, in the order of {@code requests}
     * @throws ClaimStoreException when the store could not answer for every key
     */
    default List<HolderResult> completeAll(List<CompleteRequest> requests) {
        List<HolderResult> results = new ArrayList<>(requests.size());
        for (CompleteRequest r : requests) {
            results.add(complete(r.key(), r.token(), r.fingerprint(), r.retention()));
        }
        return results;
    }

    /**
     * Completes {@code completions}, then claims {@code claims}: each as {@link #completeAll} and
     * {@link #claimAll} would, all completions decided before any claim (a key both completed and
     * claimed is claimed after its completion, and so found done). Not atomic across keys.
     *
     * <p>For a caller with completions queued when it needs a claim: a store that
     * {@link #completesWithClaims} sends them in the claims' round trip. Every other store (and this
     * default) does {@link #completeAll} and then {@link #claimAll}.
     *
     * <p>When it throws, any of the completions may have been applied and any of the claims taken,
     * as after a failed {@link #completeAll} or {@link #claimAll} (see there).
     *
     * @param completions the completions, each with the token that holds its key; may be empty
     * @param claims      the claims, each with its own token; may be empty
     * @return one answer per request of each list, in the order of its list
     * @throws ClaimStoreException when the store could not answer for every request
     */
    default Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        List<HolderResult> completed = completeAll(completions);
        return new Answers(completed, claimAll(claims));
    }

    /**
     * {@return whether {@link #completeThenClaim} costs no more wait than {@link #claimAll} of its
     * claims alone (one round trip for both; no replica wait for the completions), so that a caller
     * may send queued completions with the claims it has to wait for anyway; {@code false} by default}
     */
    default boolean completesWithClaims() {
        return false;
    }

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

    /** {@return a short name for logs: {@code redis}, {@code memory}} */
    String name();

    /**
     * Checks now, quickly (bounded by the store's own timeouts), whether the store answers: for
     * readiness. Never throws.
     *
     * @return empty when usable, else why not; never a secret or a key
     */
    Optional<String> problem();

    /** Releases connections and threads. Claims themselves stay in the store. */
    @Override
    void close();
}
