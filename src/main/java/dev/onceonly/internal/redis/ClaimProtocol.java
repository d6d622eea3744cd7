package dev.onceonly.internal.redis;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.BatchClaimStore.ClaimRequest;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.internal.support.LogId;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.params.SetParams;

import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * The claim protocol on Redis: what each primitive sends for one key, what the values mean, and how
 * a reply is read. Every primitive is ONE round trip on one key: a claim is the native
 * {@code SET key value NX PX lease GET} (Redis 7.0 and later), the others a script of
 * {@link ClaimScripts}. Where Redis refuses {@code NX} with {@code GET} (before 7.0), or
 * {@link RedisSettings.NativeClaim#OFF} says so, a claim is the {@link ClaimScripts#CLAIM} script,
 * which gives the same answer.
 *
 * <h2>Values</h2>
 * <ul>
 *   <li>in progress: {@code P<token>|<fingerprint>} with the lease as TTL, and {@code |<fence>} after
 *       it when the claim script took the key (the native claim has no fence);</li>
 *   <li>done: {@code D<fingerprint>} with the retention as TTL, or {@code 1} when there is no
 *       fingerprint (content keys, which are the body's hash already). No timestamp: the TTL already
 *       says when it goes, and every byte costs memory across millions of retained keys; {@code 1}
 *       is a small integer, which Redis keeps as one shared object instead of a string per key
 *       (133 instead of 165 bytes per retained key; not under an LRU or LFU {@code maxmemory-policy},
 *       where every key needs an object of its own).</li>
 * </ul>
 *
 * <p>Contract: the single-key operations ({@link #claim}, {@link #complete}, {@link #release},
 * {@link #extend}) go through {@link RedisCalls#call} and answer as the {@code ClaimStore} primitives
 * do; the package-private pieces below them serve the batches, which send the same commands.
 */
final class ClaimProtocol {

    /** The done value of a key stored without a fingerprint: a shared integer object in Redis. */
    static final String DONE_WITHOUT_FINGERPRINT = "1";

    private final RedisConnection connection;
    private final RedisCalls calls;
    private final ReplicaWait wait;
    private final ClaimScripts scripts;
    /**
     * Whether a claim is tried as the native {@code SET NX PX GET}: true unless configured off, until
     * Redis refused it once (a server before 7.0); then false for the store's life.
     */
    private volatile boolean nativeClaim;

    ClaimProtocol(RedisConnection connection, RedisCalls calls, ReplicaWait wait, RedisSettings.NativeClaim nativeClaim) {
        this.connection = connection;
        this.calls = calls;
        this.wait = wait;
        this.scripts = new ClaimScripts(connection, wait);
        this.nativeClaim = nativeClaim == RedisSettings.NativeClaim.AUTO;
    }

    ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        String claim = inProgress(token, fingerprint);
        long leaseMillis = lease.toMillis();
        return claimed(calls.call("claim", UnaryOperator.identity(), () -> claimOnce(key, claim, leaseMillis)), token);
    }

    /**
     * What a claim answers, from its attempt's reply.
     *
     * @param found the value the key held; null when the native claim took it, the fence when the
     *              claim script did
     * @param token the claim's token
     */
    ClaimResult claimed(Object found, String token) {
        if (found == null) {
            return ClaimResult.ACQUIRED; // the native claim: no fence (see ClaimScripts.CLAIM)
        }
        if (found instanceof Long fence) {
            return ClaimResult.acquired(fence);
        }
        String value = (String) found;
        int bar = value.indexOf('|');
        if (value.startsWith(holderPrefix(token))) {
            // Our own claim: a first attempt whose reply was lost (see RedisCalls.call) did take the key.
            int fenced = value.indexOf('|', bar + 1);
            return fenced < 0 ? ClaimResult.ACQUIRED : ClaimResult.acquired(Long.parseLong(value.substring(fenced + 1)));
        }
        if (value.equals(DONE_WITHOUT_FINGERPRINT)) {
            return ClaimResult.done("");
        }
        if (value.startsWith("D")) {
            return ClaimResult.done(value.substring(1));
        }
        if (value.startsWith("P") && bar > 0) {
            int fenced = value.indexOf('|', bar + 1);
            return ClaimResult.inProgress(fenced < 0 ? value.substring(bar + 1) : value.substring(bar + 1, fenced));
        }
        throw new ClaimStoreException(RedisCalls.STORE, "claim", new IllegalStateException(
                "key holds a value OnceOnly did not write; is the key prefix shared with another application?"));
    }

    /**
     * One attempt of a claim: the value found (null when the key was taken). Native while Redis
     * accepts {@code SET NX GET}; the script otherwise.
     */
    private Object claimOnce(String key, String claim, long leaseMillis) {
        if (nativeClaim) {
            try {
                return connection.jedis().setGet(key, claim, SetParams.setParams().nx().px(leaseMillis));
            } catch (JedisDataException e) {
                if (!refusesNxWithGet(e)) {
                    throw e;
                }
                // Redis before 7.0 refuses NX with GET as a syntax error, while parsing, before it
                // touches the key: nothing was written, so the script can take this very claim.
                claimByScriptFromNowOn();
            }
        }
        return scripts.evalsha(ClaimScripts.CLAIM_SCRIPT, key, new String[] {key, claim, Long.toString(leaseMillis)});
    }

    /** {@return whether claims are sent as the native {@code SET NX PX GET} now} */
    boolean nativeClaim() {
        return nativeClaim;
    }

    /**
     * Sends a claim into a pipeline: the command {@link #claim}'s attempt sends, native unless {@code byScript}.
     *
     * @return the value the claim will have found (null where it took the key)
     */
    Response<?> sendClaim(Pipeline p, ClaimRequest r, boolean byScript) {
        String claim = inProgress(r.token(), r.fingerprint());
        long lease = r.lease().toMillis();
        return byScript ? p.evalsha(ClaimScripts.CLAIM_SCRIPT.sha(), 1, r.key(), claim, Long.toString(lease))
                : p.setGet(r.key(), claim, SetParams.setParams().nx().px(lease));
    }

    /**
     * A claim {@link #sendClaim} sent and Redis refused (writing nothing), attempted again on its own
     * as {@link #claim}'s attempt: by source, by script when Redis refused {@code NX} with {@code GET}.
     *
     * @param refused  what Redis answered the pipelined command
     * @param byScript how the pipelined command was sent
     * @return the value found (null when the key was taken)
     */
    Object claimAgain(ClaimRequest r, JedisDataException refused, boolean byScript) {
        if (!byScript && refusesNxWithGet(refused)) {
            claimByScriptFromNowOn();
        }
        return claimOnce(r.key(), inProgress(r.token(), r.fingerprint()), r.lease().toMillis());
    }

    private synchronized void claimByScriptFromNowOn() {
        if (nativeClaim) {
            nativeClaim = false;
            LogId.ONCE0110I.log();
        }
    }

    /** Redis 6.2 answers {@code SET k v NX GET} with this error, 6.0 and older ({@code GET} unknown) too. */
    private static boolean refusesNxWithGet(JedisDataException e) {
        return !(e instanceof JedisRedirectionException) && e.getMessage() != null && e.getMessage().startsWith("ERR syntax error");
    }

    private static String inProgress(String token, String fingerprint) {
        return "P" + token + "|" + fingerprint;
    }

    /** Tokens never contain '|', so this prefix identifies the holder exactly. */
    private static String holderPrefix(String token) {
        return "P" + token + "|";
    }

    /** What a holder-checked script's reply means for its caller. */
    static HolderResult holder(Object reply) {
        return ClaimScripts.isApplied(reply) ? HolderResult.APPLIED : HolderResult.NOT_HOLDER;
    }

    /** A completion, telling also whether the replicas acknowledged it. */
    ReplicaWait.Completion complete(String key, String token, String fingerprint, Duration retention) {
        String[] keyAndArgs = completeArgs(key, token, fingerprint, retention);
        // replicas[0]: what WAIT answered after the attempt whose script changed the key, else -1.
        int[] replicas = {-1};
        return completion(calls.call("complete", reply -> ownCompletion(reply, keyAndArgs),
                () -> completeOnce(keyAndArgs, replicas)), replicas[0]);
    }

    /** The complete script's key and arguments: key, holder prefix, done value, retention in ms. */
    static String[] completeArgs(String key, String token, String fingerprint, Duration retention) {
        String done = fingerprint.isEmpty() ? DONE_WITHOUT_FINGERPRINT : "D" + fingerprint;
        return new String[] {key, holderPrefix(token), done, Long.toString(retention.toMillis())};
    }

    /**
     * One attempt of a completion on its own: the script, and WAIT after it on the same connection
     * when configured.
     *
     * @param keyAndArgs the key and arguments from {@link #completeArgs}
     * @param replicas   receives WAIT's answer when the script changed the key, else -1
     * @return the script's reply
     */
    Object completeOnce(String[] keyAndArgs, int[] replicas) {
        if (!wait.enabled()) {
            replicas[0] = -1;
            return scripts.evalsha(ClaimScripts.COMPLETE_SCRIPT, keyAndArgs[0], keyAndArgs);
        }
        return scripts.evalshaThenWait(ClaimScripts.COMPLETE_SCRIPT, keyAndArgs[0], keyAndArgs, replicas);
    }

    /**
     * The reply of a completion retried after a lost reply. The retry finds the key already done,
     * most likely by the first attempt: that is the holder's own completion, not a lost lease (else a
     * false ONCE0103W). Whether that first write reached the replicas is then unknown: the retry left
     * its replicas at -1, unconfirmed.
     */
    Object ownCompletion(Object reply, String[] keyAndArgs) {
        return ClaimScripts.isApplied(reply) || !keyAndArgs[2].equals(connection.jedis().get(keyAndArgs[0]))
                ? reply : ClaimScripts.APPLIED;
    }

    /** A completion's outcome from its reply and WAIT's answer; counts and logs one that replicas did not confirm. */
    ReplicaWait.Completion completion(Object reply, int replicas) {
        return wait.completion(holder(reply), replicas);
    }

    HolderResult release(String key, String token) {
        // A retry after a lost reply finds the key gone, most likely deleted by the first attempt.
        return holder(script(ClaimScripts.RELEASE_SCRIPT, "release",
                reply -> ClaimScripts.isApplied(reply) || connection.jedis().exists(key) ? reply : ClaimScripts.APPLIED,
                key, holderPrefix(token)));
    }

    HolderResult extend(String key, String token, Duration lease) {
        return holder(script(ClaimScripts.EXTEND_SCRIPT, "extend", UnaryOperator.identity(), key, holderPrefix(token),
                Long.toString(lease.toMillis())));
    }

    private Object script(ClaimScripts.Script script, String operation, UnaryOperator<Object> afterLostReply,
                          String key, String... args) {
        String[] keyAndArgs = new String[args.length + 1];
        keyAndArgs[0] = key;
        System.arraycopy(args, 0, keyAndArgs, 1, args.length);
        return calls.call(operation, afterLostReply, () -> scripts.evalsha(script, key, keyAndArgs));
    }
}
