package dev.onceonly.spi;

import java.time.Duration;
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
 * </ul>
 *
 * <p>A store that can send several keys in one round trip offers that through the optional batch
 * interface of this package, which extends this one; every other store is batched by looping over
 * these primitives.
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
