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
 *   <li><b>Holder check:</b> {@link #complete}, {@link #release} and {@link #extend} act only while the
 *       key is in progress <em>with the caller's token</em>. A holder whose lease expired (and whose
 *       key may since have been claimed by someone else) gets {@link HolderResult#NOT_HOLDER} and
 *       changes nothing.</li>
 *   <li><b>Fencing tokens:</b> an {@link ClaimState#ACQUIRED} answer carries the claim's
 *       {@link ClaimResult#fence() fence}, a positive number greater than the fence of every earlier
 *       claim of the same key: after a release, after a lease ran out and another caller took the key
 *       over, after a done mark expired. Gaps are allowed; only the order counts. A service that keeps
 *       the highest fence it has seen per key and refuses a lower or equal one refuses the late write
 *       of a holder that was paused past its lease. A store that answers {@code ACQUIRED} to a retry
 *       that finds its own token (after a lost reply, as Redis does) answers the fence that claim got.
 *       A store that cannot give fences answers 0 and says so in its documentation; the guard then
 *       gives handlers none. The fence is fixed in the claim's own atomic step: a caller paused between
 *       taking the key and choosing its fence could otherwise end up above the caller that took the
 *       key over from it after its lease ran out.</li>
 *   <li>{@code fingerprint} is an opaque short string the engine stores with the key and gets back
 *       with {@link ClaimState#DONE} and {@link ClaimState#IN_PROGRESS}, to detect the same key with
 *       a different body. It may be empty. It must not contain {@code '|'}.</li>
 *   <li>Durations are positive; stores keep at least millisecond precision.</li>
 *   <li>A store that cannot answer (connection lost, timeout) throws {@link ClaimStoreException};
 *       it never guesses.</li>
 * </ul>
 *
 * <h2>How the stores keep fences growing</h2>
 * <p>A fence must grow even when nothing of the key is left in the store (released, expired,
 * purged, or lost by the store itself). So each store derives it from a clock as
 * {@code max(last + 1, now in microseconds)}, where {@code last} is what the store still knows: the
 * fence survives as long as the clock does not step back by more than the time between two holders,
 * which is at least a lease (a takeover), a retention (a done mark that expired) or one round trip
 * to the store (a release, then a claim: the releasing holder had to get its claim's answer first).
 * A counter that outlives the key would survive a clock step but not a store that loses its data; a
 * clock survives both a restart without persistence and a fail-over that lost the last writes.
 * <ul>
 *   <li>Redis: {@code now} is Redis's own clock ({@code TIME}) in the claim script, in the same step
 *       as the claim; nothing else is stored per key. After a fail-over the new master's clock counts:
 *       replicas whose clocks are within a few milliseconds of each other (NTP) keep fences growing,
 *       since a fail-over takes seconds. A fail-over that lost a claim (replication is asynchronous;
 *       {@code WAIT} follows completions, not claims) lets a second holder claim while the first
 *       still runs: the second's fence is still the greater, and a receiver that checks it keeps the
 *       second's writes once it has seen one. The native claim ({@code SET NX PX GET}) cannot read the
 *       clock and gives no fence.</li>
 *   <li>Database: {@code last} is the key's row, which a release and an expiry leave in place (as
 *       expired) until the purge; {@code now} is the claiming instance's clock, so instances keep
 *       their clocks within a small part of the lease, as the store already requires. That clock is
 *       read just before the statement that takes the key: a take-over is conditional on the row's
 *       fence, but an insert after the purge is not, so a claimer paused there for longer than a
 *       whole earlier claim's life and the purge could get a lower fence than that claim had.</li>
 *   <li>Memory: {@code last} is the last fence the store gave to any key; one JVM, one clock.</li>
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
     * @return {@link ClaimState#ACQUIRED} with the claim's fence (see the contract); or
     *         {@link ClaimState#DONE} / {@link ClaimState#IN_PROGRESS} with the fingerprint stored with the key
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
