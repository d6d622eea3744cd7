package dev.onceonly.internal.redis;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.ResultStore;
import dev.onceonly.internal.support.LogId;
import redis.clients.jedis.UnifiedJedis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * {@link BatchClaimStore} on Redis through Jedis. Every primitive is ONE round trip on one key, so it works
 * unchanged on standalone, Sentinel and Cluster: a claim is the native {@code SET key value NX PX
 * lease GET} (Redis 7.0 and later), the other primitives a Lua script called by SHA ({@code EVALSHA})
 * and loaded again on {@code NOSCRIPT} (after a restart or a fail-over). Where Redis refuses
 * {@code NX} with {@code GET} (before 7.0), or {@link RedisSettings.NativeClaim#OFF} says so, a claim
 * is a script, which gives the same answer, and a fencing token with an acquired claim: Redis's
 * clock ({@code TIME}) in microseconds, read in the script's atomic step (the native command cannot,
 * and gives none). The {@code ClaimStore} contract says how far that fence grows.
 *
 * <p>With {@code waitReplicas > 0} every completion that changed its key is followed by Redis
 * {@code WAIT} on the connection that wrote it, in the same round trip; a completion the replicas
 * did not acknowledge in time is still reported {@link HolderResult#APPLIED}, but counted
 * ({@link #unconfirmedCompletions()}) and logged (ONCE0109W, at most once a minute). Claims are not
 * waited for.
 *
 * <p>{@link #claimAll}, {@link #completeAll} and {@link #completeThenClaim} pipeline the single
 * calls' commands on one connection to the master (standalone, Sentinel), one round trip per 256
 * keys; in a cluster, and with any client that is not a {@code RedisClient} or
 * {@code RedisSentinelClient}, batches are the single calls one after the other.
 *
 * <p>This class assembles its parts, each in this package: {@code RedisConnection} (the client, its
 * topology and the startup checks), {@code RedisCalls} (retry and quiet time), {@code ClaimProtocol}
 * with {@code ClaimScripts} (the values, commands and Lua scripts), {@code ReplicaWait} (the
 * replication window), {@code ClaimBatches} (the pipelines) and {@code RedisHealth} (readiness).
 */
public final class RedisClaimStore implements BatchClaimStore {

    private final RedisConnection connection;
    private final ReplicaWait wait;
    private final ClaimProtocol protocol;
    private final ClaimBatches batches;
    private final RedisHealth health;
    /** How commands reach Redis: shared with the results kept beside the claims. */
    private final RedisCalls calls;

    /**
     * Wraps a client the caller built (tests, benchmarks). The store closes it.
     *
     * @param redis the client
     */
    public RedisClaimStore(UnifiedJedis redis) {
        this(redis, RedisSettings.NativeClaim.AUTO);
    }

    /**
     * Wraps a client the caller built (tests, benchmarks), sending claims as told. The store closes it.
     *
     * @param redis       the client
     * @param nativeClaim whether claims are tried as the native {@code SET NX PX GET} first
     */
    public RedisClaimStore(UnifiedJedis redis, RedisSettings.NativeClaim nativeClaim) {
        this(redis, Duration.ZERO, 0, RedisSettings.DEFAULT_WAIT_TIMEOUT, nativeClaim);
    }

    /**
     * Wraps a client the caller built. The store closes it.
     *
     * @param redis             the client
     * @param quietAfterTimeout after a command timed out, further commands fail at once for this
     *                          long (then one asks Redis again); zero to always ask
     */
    public RedisClaimStore(UnifiedJedis redis, Duration quietAfterTimeout) {
        this(redis, quietAfterTimeout, 0, RedisSettings.DEFAULT_WAIT_TIMEOUT, RedisSettings.NativeClaim.AUTO);
    }

    /**
     * Wraps a client the caller built, waiting for replicas after each completion. The store closes it.
     *
     * @param redis             the client
     * @param quietAfterTimeout after a command timed out, further commands fail at once for this
     *                          long (then one asks Redis again); zero to always ask
     * @param waitReplicas      replicas that must acknowledge a completion (Redis {@code WAIT}); 0 not to wait
     * @param waitTimeout       how long a completion waits for them at most; keep it below the socket timeout
     * @param nativeClaim       whether claims are tried as the native {@code SET NX PX GET} first
     * @throws IllegalArgumentException if {@code waitReplicas} is negative
     */
    public RedisClaimStore(UnifiedJedis redis, Duration quietAfterTimeout, int waitReplicas, Duration waitTimeout,
                           RedisSettings.NativeClaim nativeClaim) {
        this(new ReplicaWait(waitReplicas, waitTimeout), new RedisConnection(redis), quietAfterTimeout, nativeClaim);
    }

    /** The wait comes first: it checks {@code waitReplicas} before the connection exists. */
    private RedisClaimStore(ReplicaWait wait, RedisConnection connection, Duration quietAfterTimeout,
                            RedisSettings.NativeClaim nativeClaim) {
        this.calls = new RedisCalls(quietAfterTimeout);
        this.connection = connection;
        this.wait = wait;
        this.protocol = new ClaimProtocol(connection, calls, wait, nativeClaim);
        this.batches = new ClaimBatches(connection, calls, wait, protocol);
        this.health = new RedisHealth(connection);
    }

    /**
     * Connects as configured; does not fail when Redis is down (the store-failure policy handles that per message).
     *
     * @param settings how to reach Redis
     * @return the store
     */
    public static RedisClaimStore connect(RedisSettings settings) {
        // In a cluster one node's timeout says nothing about the others: no quiet time there.
        Duration quiet = settings.mode() == RedisSettings.Mode.CLUSTER ? Duration.ZERO : settings.socketTimeout();
        RedisClaimStore store = new RedisClaimStore(new ReplicaWait(settings.waitReplicas(), settings.waitTimeout()),
                RedisConnection.open(settings), quiet, settings.nativeClaim());
        store.connection.checkEvictionPolicy();
        LogId.ONCE0006I.log(settings.describe(), settings.user() == null ? "no ACL user" : "user " + settings.user());
        return store;
    }

    /**
     * The store of the guarded calls' results on this store's Redis, each next to its claim; it
     * needs no closing of its own (closing this store closes its connection).
     *
     * @return the result store
     */
    public ResultStore results() {
        return new RedisResultStore(connection, calls);
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        return protocol.claim(key, token, fingerprint, lease);
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return completeReplicated(key, token, fingerprint, retention).result();
    }

    /** {@link #complete}, telling also whether the replicas acknowledged it (tests measure the window with it). */
    ReplicaWait.Completion completeReplicated(String key, String token, String fingerprint, Duration retention) {
        return protocol.complete(key, token, fingerprint, retention);
    }

    /**
     * {@return completions since start that fewer than {@code waitReplicas} replicas acknowledged in
     * time (0 with WAIT off)}
     */
    public long unconfirmedCompletions() {
        return wait.unconfirmedCompletions();
    }

    @Override
    public HolderResult release(String key, String token) {
        return protocol.release(key, token);
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return protocol.extend(key, token, lease);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Standalone and Sentinel: one pipelined round trip of the claims' commands per 256 keys (see
     * the class comment). Cluster: {@link #claim} for each request.
     */
    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
        // Each claim goes to its key's master and follows MOVED/ASK on its own: safe on any topology.
        return connection.pipelinesBatches() ? batches.claimAll(requests) : BatchClaimStore.looping(this).claimAll(requests);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Standalone and Sentinel: one pipelined round trip of the completion scripts per 256 keys,
     * with {@code waitReplicas > 0} ONE {@code WAIT} after the last of them on the same connection,
     * which counts the replicas that acknowledged every write before it. Completions the replicas did
     * not confirm are counted and logged as {@link #complete} counts them. Cluster: {@link #complete}
     * for each request.
     */
    @Override
    public List<HolderResult> completeAll(List<CompleteRequest> requests) {
        // Each completion goes to its key's master with its own WAIT there, following MOVED/ASK.
        return connection.pipelinesBatches() ? batches.completeAll(requests) : BatchClaimStore.looping(this).completeAll(requests);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Standalone and Sentinel with {@code waitReplicas = 0}: one pipelined round trip, the
     * completion scripts first, when the requests fit in one round (256) and no key comes twice.
     * Otherwise {@link #completeAll}, then {@link #claimAll}.
     */
    @Override
    public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        if (batches.takesInOneRound(completions, claims)) {
            return batches.completeThenClaim(completions, claims);
        }
        // This store's own batches, each pipelined where it can: two round trips, not one per key.
        List<HolderResult> completed = completeAll(completions);
        return new Answers(completed, claimAll(claims));
    }

    /** Pipelined batches, and no WAIT: WAIT after the completions would hold the claims' replies until the replicas answer. */
    @Override
    public boolean completesWithClaims() {
        return batches.completesWithClaims();
    }

    /**
     * {@return how the store reaches Redis, for readiness: {@code standalone host:port},
     * {@code sentinel master <name> at host:port} (the master the sentinels name now) or
     * {@code cluster, nodes known: host:port,...}; addresses only, never credentials}
     */
    public String topology() {
        return connection.topology();
    }

    /**
     * Whether Redis answers now (for readiness), naming the topology and the node that does not
     * answer (host and port only). Standalone and Sentinel: a PING to the (current) master. Cluster:
     * the cluster state as a node reports it and a PING to every master serving slots, so a master
     * that is down shows until its replica took over; a failed node that serves no slot does not
     * make the store unready.
     */
    @Override
    public Optional<String> problem() {
        return health.problem();
    }

    @Override
    public String name() {
        return RedisCalls.STORE;
    }

    @Override
    public void close() {
        connection.close();
    }
}
