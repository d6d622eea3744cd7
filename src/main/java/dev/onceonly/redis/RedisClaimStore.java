package dev.onceonly.redis;

import dev.onceonly.support.LogId;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.SslVerifyMode;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * {@link ClaimStore} on Redis through Jedis. Every primitive is ONE round trip on one key, so it works
 * unchanged on standalone, Sentinel and Cluster: a claim is the native {@code SET key value NX PX
 * lease GET} (Redis 7.0 and later), the other primitives a Lua script called by SHA ({@code EVALSHA})
 * and loaded again on {@code NOSCRIPT} (after a restart or a fail-over). Where Redis refuses
 * {@code NX} with {@code GET} (before 7.0), or {@link RedisSettings.NativeClaim#OFF} says so, a claim
 * is the {@link #CLAIM} script, which gives the same answer.
 *
 * <h2>Values</h2>
 * <ul>
 *   <li>in progress: {@code P<token>|<fingerprint>} with the lease as TTL;</li>
 *   <li>done: {@code D<fingerprint>} with the retention as TTL, or {@code 1} when there is no
 *       fingerprint (content keys, which are the body's hash already). No timestamp: the TTL already
 *       says when it goes, and every byte costs memory across millions of retained keys; {@code 1}
 *       is a small integer, which Redis keeps as one shared object instead of a string per key
 *       (133 instead of 165 bytes per retained key; not under an LRU or LFU {@code maxmemory-policy},
 *       where every key needs an object of its own).</li>
 * </ul>
 *
 * <h2>Replication window</h2>
 * Redis replicates asynchronously: a key marked done on a master that fails before its replica got
 * the write is gone after the fail-over, and a later copy of the message finds no claim (the ledger,
 * when configured, still stops it). With {@code waitReplicas > 0} every completion that changed the
 * key is followed by Redis {@code WAIT waitReplicas waitTimeout} on the very connection that wrote it
 * (WAIT only counts that connection's writes, and a Lua script cannot call it), pipelined with the
 * script: one round trip. A completion the replicas did not acknowledge in time is still reported
 * {@link HolderResult#APPLIED} — the key is done on the master, and failing it would make the engine
 * retry a write that succeeded — but is counted ({@link #unconfirmedCompletions()}) and logged
 * (ONCE0109W, at most once a minute). Claims are not waited for: a claim lost in a fail-over lets a
 * concurrent copy run too, which only the ledger can stop in any case, and a claim lives for one
 * lease; a completion is what stops copies for the whole retention.
 *
 * <h2>Batches</h2>
 * {@link #claimAll} and {@link #completeAll} send their commands pipelined on one connection to the
 * master (standalone, Sentinel): the same commands as the single calls, one round trip for up to
 * {@link #MAX_ROUND} keys, with {@code completeAll}'s one {@code WAIT} after the last completion;
 * {@link #completeThenClaim} sends its completions ahead of its claims in one such round trip (not
 * with {@code WAIT}: see {@link #completesWithClaims}).
 * Each reply is read as the single call reads it. A key whose command Redis refused (NOSCRIPT, the
 * native claim refused, anything else) is sent again on its own as the single call's attempt would
 * be; a round whose connection was lost is sent again whole, as the single calls are. In a cluster,
 * and with any client that is not a {@link RedisClient} or {@link RedisSentinelClient}, batches are
 * the single calls one after the other.
 */
public final class RedisClaimStore implements ClaimStore {

    /** The done value of a key stored without a fingerprint: a shared integer object in Redis. */
    static final String DONE_WITHOUT_FINGERPRINT = "1";

    /**
     * SET NX PX, and on failure the current value in the same call: never GET-then-SET. Exactly what
     * the native {@code SET NX PX GET} answers (nil: taken; else the value found, unchanged), for
     * servers that refuse that command.
     */
    static final String CLAIM = """
            if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
            return redis.call('GET', KEYS[1])""";
    /** Compare-and-set from in progress (held by the token in ARGV[1]) to done. */
    static final String COMPLETE = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then
              redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end
            return 0""";
    /** Compare-and-delete. */
    static final String RELEASE = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
            return 0""";
    /** Compare-and-PEXPIRE. */
    static final String EXTEND = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
            return 0""";

    private record Script(String source, String sha) {
        static Script of(String source) {
            try {
                byte[] sha1 = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
                return new Script(source, HexFormat.of().formatHex(sha1));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static final Script CLAIM_SCRIPT = Script.of(CLAIM);
    private static final Script COMPLETE_SCRIPT = Script.of(COMPLETE);
    private static final Script RELEASE_SCRIPT = Script.of(RELEASE);
    private static final Script EXTEND_SCRIPT = Script.of(EXTEND);

    /** Commands one round trip of a batch carries at most; a longer batch takes several. */
    static final int MAX_ROUND = 256;
    /** The replicas array of a round without completions. */
    private static final int[] NO_REPLICAS = new int[0];

    private final UnifiedJedis redis;
    /**
     * Whether batches are pipelined: only where {@link UnifiedJedis#pipelined()} is one connection to
     * the one master. A cluster's keys live on several masters, and a command redirected in a
     * pipeline would leave the commands after it on the wrong node: there, a batch is single calls.
     */
    private final boolean pipelinesBatches;
    /**
     * Whether a claim is tried as the native {@code SET NX PX GET}: true unless configured off, until
     * Redis refused it once (a server before 7.0); then false for the store's life.
     */
    private volatile boolean nativeClaim;
    /** How long Redis counts as not answering after a command timed out. */
    private final long quietNanos;
    /**
     * Until when ({@link System#nanoTime()}) commands fail at once, without asking Redis: after a
     * timeout, every message would otherwise wait its own timeout and a paused Redis would stall
     * the consumer for the whole pause. 0 when Redis answers.
     */
    private volatile long quietUntil;
    /** Sentinel mode: the master's name; standalone: host:port, when known (from settings); for {@link #topology()}. */
    private String sentinelMaster = "";
    private String standalone;
    /** How to open a connection to a cluster node the client has no pool for yet (health only). */
    private JedisClientConfig nodeConfig = DefaultJedisClientConfig.builder().build();
    /** Replicas that must acknowledge a completion; 0: WAIT is not used. */
    private final int waitReplicas;
    private final long waitTimeoutMillis;
    private final AtomicLong unconfirmed = new AtomicLong();
    /** Unconfirmed completions not yet logged, and when ONCE0109W was last logged (nanoTime). */
    private final AtomicLong unreported = new AtomicLong();
    private final AtomicLong lastReport = new AtomicLong(System.nanoTime() - REPORT_EVERY_NANOS);
    private static final long REPORT_EVERY_NANOS = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);

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
        if (waitReplicas < 0) {
            throw new IllegalArgumentException("waitReplicas must not be negative: " + waitReplicas);
        }
        this.redis = redis;
        this.quietNanos = quietAfterTimeout.toNanos();
        this.waitReplicas = waitReplicas;
        this.waitTimeoutMillis = waitTimeout.toMillis();
        this.nativeClaim = nativeClaim == RedisSettings.NativeClaim.AUTO;
        this.pipelinesBatches = redis instanceof RedisClient || redis instanceof RedisSentinelClient;
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
        RedisClaimStore store = new RedisClaimStore(client(settings), quiet, settings.waitReplicas(), settings.waitTimeout(),
                settings.nativeClaim());
        store.sentinelMaster = settings.sentinelMaster();
        store.standalone = settings.mode() == RedisSettings.Mode.STANDALONE ? settings.nodes().get(0) : null;
        store.nodeConfig = clientConfig(settings);
        store.checkEvictionPolicy();
        LogId.ONCE0006I.log(settings.describe(), settings.user() == null ? "no ACL user" : "user " + settings.user());
        return store;
    }

    static UnifiedJedis client(RedisSettings s) {
        JedisClientConfig config = clientConfig(s);
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(s.poolSize());
        pool.setMaxIdle(s.poolSize());
        // Idle connections are checked every few seconds, so connections a Redis restart broke are
        // found before a message needs them (a PING per idle connection, off the message path).
        pool.setTestWhileIdle(true);
        pool.setTimeBetweenEvictionRuns(Duration.ofSeconds(5));
        // Waiting for a free connection is bounded like a command; the pool's default waits forever.
        pool.setMaxWait(s.socketTimeout());
        Set<HostAndPort> nodes = new LinkedHashSet<>();
        s.nodes().forEach(n -> nodes.add(HostAndPort.from(n)));
        return switch (s.mode()) {
            case STANDALONE -> RedisClient.builder().hostAndPort(nodes.iterator().next())
                    .clientConfig(config).poolConfig(pool).build();
            // The sentinels have credentials and TLS of their own (requirepass, tls-port on the sentinel).
            case SENTINEL -> RedisSentinelClient.builder().masterName(s.sentinelMaster()).sentinels(nodes)
                    .clientConfig(config).poolConfig(pool)
                    .sentinelClientConfig(DefaultJedisClientConfig.builder()
                            .connectionTimeoutMillis((int) s.connectTimeout().toMillis())
                            .socketTimeoutMillis((int) s.socketTimeout().toMillis())
                            .user(s.sentinels().user())
                            .password(s.sentinels().password())
                            .ssl(s.sentinels().tls())
                            .sslOptions(s.sentinels().tls() ? sslOptions(s.trust()) : null)
                            .clientName("onceonly-sentinel")
                            .build())
                    .build();
            // Redirections (MOVED, ASK) and retries share one bound: the socket timeout.
            case CLUSTER -> RedisClusterClient.builder().nodes(nodes).clientConfig(config).poolConfig(pool)
                    .maxTotalRetriesDuration(s.socketTimeout()).build();
        };
    }

    private static JedisClientConfig clientConfig(RedisSettings s) {
        return DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis((int) s.connectTimeout().toMillis())
                .socketTimeoutMillis((int) s.socketTimeout().toMillis())
                .user(s.user())
                .password(s.password())
                .database(s.database())
                .ssl(s.tls())
                .sslOptions(s.tls() ? sslOptions(s.trust()) : null)
                .clientName("onceonly")
                .build();
    }

    /**
     * Warns (ONCE0003W) when Redis may evict claims; silently evicted claims let duplicates through.
     * Only {@code noeviction} is safe: every claim has a TTL, so {@code volatile-*} policies pick
     * claims as readily as {@code allkeys-*} ones.
     */
    void checkEvictionPolicy() {
        try {
            Map<String, String> policy = redis.configGet("maxmemory-policy");
            String value = policy.getOrDefault("maxmemory-policy", "");
            if (!value.equals("noeviction")) {
                LogId.ONCE0003W.log(value);
            }
        } catch (JedisException e) {
            // Managed Redis services often disable CONFIG; not knowing is worth a warning, not a failure.
            LogId.ONCE0007W.log(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        String claim = inProgress(token, fingerprint);
        long leaseMillis = lease.toMillis();
        return claimed(call("claim", UnaryOperator.identity(), () -> claimOnce(key, claim, leaseMillis)), token);
    }

    /**
     * What a claim answers, from the value its attempt found.
     *
     * @param found the value the key held (null: the attempt took it)
     * @param token the claim's token
     */
    private ClaimResult claimed(Object found, String token) {
        String value = (String) found;
        if (value == null) {
            return ClaimResult.ACQUIRED;
        }
        if (value.startsWith(holderPrefix(token))) {
            // Our own claim: a first attempt whose reply was lost (see call) did take the key.
            return ClaimResult.ACQUIRED;
        }
        if (value.equals(DONE_WITHOUT_FINGERPRINT)) {
            return ClaimResult.done("");
        }
        if (value.startsWith("D")) {
            return ClaimResult.done(value.substring(1));
        }
        int bar = value.indexOf('|');
        if (value.startsWith("P") && bar > 0) {
            return ClaimResult.inProgress(value.substring(bar + 1));
        }
        throw new ClaimStoreException(name(), "claim", new IllegalStateException(
                "key holds a value OnceOnly did not write; is the key prefix shared with another application?"));
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return completeReplicated(key, token, fingerprint, retention).result();
    }

    /**
     * The outcome of one completion.
     *
     * @param result   what {@link #complete} reports
     * @param replicas how many replicas acknowledged the write within the wait timeout; -1 when not
     *                 asked (WAIT off, or nothing was written by this call)
     * @param confirmed whether the write is known to be on {@code waitReplicas} replicas (always
     *                 false with WAIT off)
     */
    record Completion(HolderResult result, int replicas, boolean confirmed) {
    }

    /** {@link #complete}, telling also whether the replicas acknowledged it (tests measure the window with it). */
    Completion completeReplicated(String key, String token, String fingerprint, Duration retention) {
        String[] keyAndArgs = completeArgs(key, token, fingerprint, retention);
        // replicas[0]: what WAIT answered after the attempt whose script changed the key, else -1.
        int[] replicas = {-1};
        return completion(call("complete", reply -> ownCompletion(reply, keyAndArgs),
                () -> completeOnce(keyAndArgs, replicas)), replicas[0]);
    }

    /** The complete script's key and arguments: key, holder prefix, done value, retention in ms. */
    private static String[] completeArgs(String key, String token, String fingerprint, Duration retention) {
        String done = fingerprint.isEmpty() ? DONE_WITHOUT_FINGERPRINT : "D" + fingerprint;
        return new String[] {key, holderPrefix(token), done, Long.toString(retention.toMillis())};
    }

    /**
     * One attempt of a completion on its own: the script, and WAIT after it on the same connection
     * when configured.
     *
     * @param replicas receives WAIT's answer when the script changed the key, else -1
     */
    private Object completeOnce(String[] keyAndArgs, int[] replicas) {
        if (waitReplicas == 0) {
            replicas[0] = -1;
            return evalsha(COMPLETE_SCRIPT, keyAndArgs[0], keyAndArgs);
        }
        return evalshaThenWait(COMPLETE_SCRIPT, keyAndArgs[0], keyAndArgs, replicas);
    }

    /**
     * The reply of a completion retried after a lost reply. The retry finds the key already done,
     * most likely by the first attempt: that is the holder's own completion, not a lost lease (else a
     * false ONCE0103W). Whether that first write reached the replicas is then unknown: the retry left
     * its replicas at -1, unconfirmed.
     */
    private Object ownCompletion(Object reply, String[] keyAndArgs) {
        return isApplied(reply) || !keyAndArgs[2].equals(redis.get(keyAndArgs[0])) ? reply : APPLIED;
    }

    /** A completion's outcome from its reply and WAIT's answer; counts and logs one that replicas did not confirm. */
    private Completion completion(Object reply, int replicas) {
        HolderResult result = holder(reply);
        boolean confirmed = waitReplicas > 0 && replicas >= waitReplicas;
        if (waitReplicas > 0 && result == HolderResult.APPLIED && !confirmed) {
            unconfirmed(replicas);
        }
        return new Completion(result, replicas, confirmed);
    }

    /**
     * {@return completions since start that fewer than {@code waitReplicas} replicas acknowledged in
     * time (0 with WAIT off)}
     */
    public long unconfirmedCompletions() {
        return unconfirmed.get();
    }

    private void unconfirmed(int replicas) {
        unconfirmed.incrementAndGet();
        unreported.incrementAndGet();
        long last = lastReport.get();
        long now = System.nanoTime();
        // One line a minute at most: with a replica down, every completion falls short.
        if (now - last >= REPORT_EVERY_NANOS && lastReport.compareAndSet(last, now)) {
            LogId.ONCE0109W.log(unreported.getAndSet(0), waitReplicas, waitTimeoutMillis,
                    replicas < 0 ? "unknown (reply lost, written on retry)" : replicas + " acknowledged");
        }
    }

    @Override
    public HolderResult release(String key, String token) {
        // A retry after a lost reply finds the key gone, most likely deleted by the first attempt.
        return holder(script(RELEASE_SCRIPT, "release", reply -> isApplied(reply) || redis.exists(key) ? reply : APPLIED,
                key, holderPrefix(token)));
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return holder(script(EXTEND_SCRIPT, "extend", UnaryOperator.identity(), key, holderPrefix(token),
                Long.toString(lease.toMillis())));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Standalone and Sentinel: one pipelined round trip of the claims' commands per {@link #MAX_ROUND}
     * keys (see the class comment). Cluster: {@link #claim} for each request.
     */
    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
        if (!pipelinesBatches) {
            // Each claim goes to its key's master and follows MOVED/ASK on its own: safe on any topology.
            return ClaimStore.super.claimAll(requests);
        }
        List<ClaimResult> results = new ArrayList<>(requests.size());
        for (List<ClaimRequest> round : rounds(requests, ClaimRequest::key)) {
            // A round whose connection was lost is sent again whole (see call): every claim of the
            // first attempt that took its key is recognised by its own token, as claim does.
            List<Object> found = call("claim", UnaryOperator.identity(), () -> round(List.of(), round, NO_REPLICAS));
            for (int i = 0; i < round.size(); i++) {
                results.add(claimed(found.get(i), round.get(i).token()));
            }
        }
        return results;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Standalone and Sentinel: one pipelined round trip of the completion scripts per
     * {@link #MAX_ROUND} keys, with {@code waitReplicas > 0} ONE {@code WAIT} after the last of them
     * on the same connection, which counts the replicas that acknowledged every write before it.
     * Completions the replicas did not confirm are counted and logged as {@link #complete} counts
     * them. Cluster: {@link #complete} for each request.
     */
    @Override
    public List<HolderResult> completeAll(List<CompleteRequest> requests) {
        if (!pipelinesBatches) {
            // Each completion goes to its key's master with its own WAIT there, following MOVED/ASK.
            return ClaimStore.super.completeAll(requests);
        }
        List<HolderResult> results = new ArrayList<>(requests.size());
        for (List<CompleteRequest> round : rounds(requests, CompleteRequest::key)) {
            List<String[]> args = round.stream()
                    .map(r -> completeArgs(r.key(), r.token(), r.fingerprint(), r.retention())).toList();
            int[] replicas = new int[round.size()];
            // A round whose connection was lost is sent again whole (see call); a key the retry finds
            // done with its own done value was completed by the first attempt (see ownCompletion).
            List<Object> replies = call("complete", retried -> ownCompletions(retried, args),
                    () -> round(args, List.of(), replicas));
            for (int i = 0; i < round.size(); i++) {
                results.add(completion(replies.get(i), replicas[i]).result());
            }
        }
        return results;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Standalone and Sentinel with {@code waitReplicas = 0}: one pipelined round trip, the
     * completion scripts first, when the requests fit in one round ({@link #MAX_ROUND}) and no key
     * comes twice. Otherwise {@link #completeAll}, then {@link #claimAll}.
     */
    @Override
    public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        if (!completesWithClaims() || completions.isEmpty() || claims.isEmpty()
                || completions.size() + claims.size() > MAX_ROUND || !distinctKeys(completions, claims)) {
            return ClaimStore.super.completeThenClaim(completions, claims);
        }
        List<String[]> args = new ArrayList<>(completions.size());
        for (CompleteRequest r : completions) {
            args.add(completeArgs(r.key(), r.token(), r.fingerprint(), r.retention()));
        }
        // Lost connection: sent again whole, read as completeAll's and claimAll's retries are.
        List<Object> replies = call("claim", retried -> ownCompletions(retried, args),
                () -> round(args, claims, new int[args.size()]));
        List<HolderResult> completed = new ArrayList<>(args.size());
        for (int i = 0; i < args.size(); i++) {
            completed.add(holder(replies.get(i)));
        }
        List<ClaimResult> claimed = new ArrayList<>(claims.size());
        for (int i = 0; i < claims.size(); i++) {
            claimed.add(claimed(replies.get(args.size() + i), claims.get(i).token()));
        }
        return new Answers(completed, claimed);
    }

    /** Pipelined batches, and no WAIT: WAIT after the completions would hold the claims' replies until the replicas answer. */
    @Override
    public boolean completesWithClaims() {
        return pipelinesBatches && waitReplicas == 0;
    }

    /** Compared pairwise, without a set: this runs before every claim that carries marks, and both lists are short. */
    private static boolean distinctKeys(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        int n = completions.size() + claims.size();
        for (int i = 0; i < n; i++) {
            String key = i < completions.size() ? completions.get(i).key() : claims.get(i - completions.size()).key();
            for (int j = i + 1; j < n; j++) {
                String other = j < completions.size() ? completions.get(j).key() : claims.get(j - completions.size()).key();
                if (key.equals(other)) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * One attempt of a round, pipelined: the completion scripts, WAIT after them when configured,
     * then the claims. The replies in that order: each script's, then the value each claim found
     * (null where it took the key). Callers put no key twice in a round (see {@link #rounds}).
     *
     * @param replicas receives for each completion WAIT's answer when its script changed the key, else -1
     */
    private List<Object> round(List<String[]> completions, List<ClaimRequest> claims, int[] replicas) {
        boolean byScript = !nativeClaim;
        List<Response<?>> sent = new ArrayList<>(completions.size() + claims.size());
        Response<Long> wait = null;
        try (Pipeline p = pipeline()) {
            for (String[] keyAndArgs : completions) {
                sent.add(p.evalsha(COMPLETE_SCRIPT.sha, 1, keyAndArgs));
            }
            if (waitReplicas > 0 && !completions.isEmpty()) {
                wait = p.waitReplicas(waitReplicas, waitTimeoutMillis);
            }
            for (ClaimRequest r : claims) {
                String claim = inProgress(r.token(), r.fingerprint());
                long lease = r.lease().toMillis();
                sent.add(byScript ? p.evalsha(CLAIM_SCRIPT.sha, 1, r.key(), claim, Long.toString(lease))
                        : p.setGet(r.key(), claim, SetParams.setParams().nx().px(lease)));
            }
            p.sync();
        }
        int acknowledged = wait == null ? -1 : acknowledged(wait);
        List<Object> replies = new ArrayList<>(sent.size());
        for (int i = 0; i < completions.size(); i++) {
            try {
                Object reply = sent.get(i).get();
                replicas[i] = isApplied(reply) ? acknowledged : -1;
                replies.add(reply);
            } catch (JedisDataException e) {
                // Redis refused this one script (NOSCRIPT, ...) and wrote nothing for it: it is
                // attempted again on its own, as complete's attempt does it (by source, with its own
                // WAIT), and what Redis refuses then fails the batch as it fails a completion. No
                // other request of the round has this key, so this later attempt overtakes none.
                int[] own = {-1};
                replies.add(completeOnce(completions.get(i), own));
                replicas[i] = own[0];
            }
        }
        for (int i = 0; i < claims.size(); i++) {
            ClaimRequest r = claims.get(i);
            try {
                replies.add(sent.get(completions.size() + i).get());
            } catch (JedisDataException e) {
                // Likewise for a claim (by source, by script; NX with GET refused before 7.0).
                if (!byScript && refusesNxWithGet(e)) {
                    claimByScriptFromNowOn();
                }
                replies.add(claimOnce(r.key(), inProgress(r.token(), r.fingerprint()), r.lease().toMillis()));
            }
        }
        return replies;
    }

    /** The replies of a retried round whose first replies are those of {@code args}' completions (see {@link #ownCompletion}). */
    private List<Object> ownCompletions(List<Object> retried, List<String[]> args) {
        List<Object> replies = new ArrayList<>(retried);
        for (int i = 0; i < args.size(); i++) {
            replies.set(i, ownCompletion(retried.get(i), args.get(i)));
        }
        return replies;
    }

    /**
     * A batch cut into round trips of at most {@link #MAX_ROUND} requests with no key twice in one
     * round: a key's next request goes in the next round, after the first has its answer. So a key
     * requested twice is decided in request order even when one of its commands is sent again on its
     * own after its round (a refused command, see {@link #round}).
     */
    private static <R> List<List<R>> rounds(List<R> requests, Function<R, String> key) {
        List<List<R>> rounds = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        int from = 0;
        for (int i = 0; i < requests.size(); i++) {
            String k = key.apply(requests.get(i));
            if (i - from == MAX_ROUND || !keys.add(k)) {
                rounds.add(requests.subList(from, i));
                keys.clear();
                keys.add(k);
                from = i;
            }
        }
        if (from < requests.size()) {
            rounds.add(requests.subList(from, requests.size()));
        }
        return rounds;
    }

    /**
     * One attempt of a claim: the value found (null when the key was taken). Native while Redis
     * accepts {@code SET NX GET}; the script otherwise.
     */
    private Object claimOnce(String key, String claim, long leaseMillis) {
        if (nativeClaim) {
            try {
                return redis.setGet(key, claim, SetParams.setParams().nx().px(leaseMillis));
            } catch (JedisDataException e) {
                if (!refusesNxWithGet(e)) {
                    throw e;
                }
                // Redis before 7.0 refuses NX with GET as a syntax error, while parsing, before it
                // touches the key: nothing was written, so the script can take this very claim.
                claimByScriptFromNowOn();
            }
        }
        return evalsha(CLAIM_SCRIPT, key, new String[] {key, claim, Long.toString(leaseMillis)});
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

    private static final Long APPLIED = 1L;

    private static boolean isApplied(Object reply) {
        return APPLIED.equals(reply);
    }

    private static HolderResult holder(Object reply) {
        return isApplied(reply) ? HolderResult.APPLIED : HolderResult.NOT_HOLDER;
    }

    private Object script(Script script, String operation, UnaryOperator<Object> afterLostReply, String key, String... args) {
        String[] keyAndArgs = prepend(key, args);
        return call(operation, afterLostReply, () -> evalsha(script, key, keyAndArgs));
    }

    /**
     * @param afterLostReply reads the reply of the retry that follows a connection lost mid-call,
     *                       when the first attempt may have been applied without its reply arriving
     * @param attempt        one attempt of the command; run a second time after a lost connection
     */
    private <T> T call(String operation, UnaryOperator<T> afterLostReply, Supplier<T> attempt) {
        long quiet = quietUntil;
        if (quiet != 0 && quiet - System.nanoTime() > 0) {
            throw new ClaimStoreException(name(), operation,
                    new java.io.IOException("Redis did not answer a moment ago (socket-timeout); not asked again yet"));
        }
        try {
            try {
                return answered(attempt.get());
            } catch (JedisConnectionException e) {
                if (timedOut(e)) {
                    // Redis is slow, paused or cut off: a second try would only double the wait. One
                    // command waits at most socket-timeout.
                    throw e;
                }
                // A pooled connection Redis closed meanwhile (restart, fail-over, idle timeout): the
                // pool drops it; one retry on another connection. Safe to repeat: claim recognises
                // its own token, and the holder-checked scripts change nothing a second time.
                return answered(afterLostReply.apply(attempt.get()));
            }
        } catch (JedisException e) {
            if (quietNanos > 0 && timedOut(e)) {
                quietUntil = System.nanoTime() + quietNanos;
            }
            throw new ClaimStoreException(name(), operation, e);
        }
    }

    private <T> T answered(T reply) {
        if (quietUntil != 0) {
            quietUntil = 0;
        }
        return reply;
    }

    /** Trust as configured; FULL verification checks the host name too (Jedis checks none by default). */
    private static SslOptions sslOptions(RedisSettings.TlsTrust trust) {
        SslOptions.Builder b = SslOptions.builder()
                .sslVerifyMode(trust.verifyHostname() ? SslVerifyMode.FULL : SslVerifyMode.CA);
        if (trust.truststore() != null) {
            b.truststore(trust.truststore().toFile(), trust.password() == null ? null : trust.password().toCharArray())
                    .trustStoreType(trust.type());
        }
        return b.build();
    }

    private static boolean timedOut(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    private Object evalsha(Script script, String key, String[] keyAndArgs) {
        try {
            return redis.evalsha(script.sha, 1, keyAndArgs);
        } catch (JedisNoScriptException e) {
            // Script cache lost (restart, fail-over, SCRIPT FLUSH) or never filled on this node: run
            // the source, which caches it there. EVAL goes to the key's node like EVALSHA; SCRIPT LOAD
            // does not: Jedis broadcasts it to every master of a cluster, so one frozen master failed
            // (or held up by a socket timeout) every first call on the other masters' keys.
            return redis.eval(script.source, 1, keyAndArgs);
        }
    }

    /**
     * Runs the script and then {@code WAIT} on ONE connection, pipelined: WAIT counts the replicas
     * that acknowledged the writes of the connection it is sent on, so it must follow the write on
     * the same connection (a pooled command would take any connection). In a cluster that is the
     * connection to the key's master, following MOVED and ASK like the client does. This path does
     * not refresh the client's slot map itself; the claim that precedes every completion goes
     * through the client, which does. A redirected attempt's own WAIT is spent (it answers at once
     * unless that node's replicas lag).
     *
     * @param replicas receives WAIT's answer when the script changed the key, else -1
     */
    private Object evalshaThenWait(Script script, String key, String[] keyAndArgs, int[] replicas) {
        HostAndPort target = null;
        boolean asking = false;
        boolean bySource = false;
        for (int hop = 0; ; hop++) {
            Response<Object> r;
            Response<Long> acknowledged;
            try (Pipeline p = pipelineFor(key, target)) {
                if (asking) {
                    p.sendCommand(Protocol.Command.ASKING, new String[0]);
                }
                r = bySource ? p.eval(script.source, 1, keyAndArgs) : p.evalsha(script.sha, 1, keyAndArgs);
                acknowledged = p.waitReplicas(key, waitReplicas, waitTimeoutMillis);
                p.sync();
            }
            Object reply;
            try {
                reply = r.get();
            } catch (JedisNoScriptException e) {
                if (bySource) {
                    throw e;
                }
                // Script cache lost on this node (restart, fail-over, SCRIPT FLUSH): run the source
                // there, which caches it (see evalsha). Nothing was written by the refused call.
                bySource = true;
                continue;
            } catch (JedisRedirectionException e) {
                // The slot moved (MOVED) or is moving (ASK): nothing was written; go where Redis says.
                if (hop >= 3) {
                    throw e;
                }
                target = e.getTargetNode();
                asking = e instanceof JedisAskDataException;
                continue;
            }
            replicas[0] = isApplied(reply) ? acknowledged(acknowledged) : -1;
            return reply;
        }
    }

    /**
     * WAIT's answer; -1 when it was refused (an ACL without {@code +wait}, a node that just became a
     * replica): the write was applied all the same, and is then reported unconfirmed, not failed.
     */
    private static int acknowledged(Response<Long> wait) {
        try {
            return wait.get().intValue();
        } catch (JedisDataException refused) {
            return -1;
        }
    }

    /** A pipeline on one connection: to {@code node} if given (a redirection), else to the key's master. */
    private Pipeline pipelineFor(String key, HostAndPort node) {
        if (redis instanceof RedisClusterClient cluster) {
            Connection c;
            if (node == null) {
                c = cluster.getConnectionFromSlot(JedisClusterCRC16.getSlot(key));
            } else {
                ConnectionPool pool = cluster.getClusterNodes().get(node.toString());
                if (pool == null) {
                    throw new JedisConnectionException("cluster node " + node + " is not known yet");
                }
                c = pool.getResource();
            }
            return new Pipeline(c, true);
        }
        return pipeline();
    }

    /** Standalone and Sentinel: a pipeline on one pooled connection to the (current) master, returned on close. */
    private Pipeline pipeline() {
        return (Pipeline) redis.pipelined();
    }

    private static String[] prepend(String key, String[] args) {
        String[] all = new String[args.length + 1];
        all[0] = key;
        System.arraycopy(args, 0, all, 1, args.length);
        return all;
    }

    /**
     * {@return how the store reaches Redis, for readiness: {@code standalone host:port},
     * {@code sentinel master <name> at host:port} (the master the sentinels name now) or
     * {@code cluster, nodes known: host:port,...}; addresses only, never credentials}
     */
    public String topology() {
        if (redis instanceof RedisSentinelClient sentinel) {
            HostAndPort master = sentinel.getCurrentMaster();
            return "sentinel master " + sentinelMaster + " at " + (master == null ? "unknown" : master);
        }
        if (redis instanceof RedisClusterClient cluster) {
            return "cluster, nodes known: " + String.join(",", new java.util.TreeSet<>(cluster.getClusterNodes().keySet()));
        }
        return "standalone" + (standalone == null ? "" : " " + standalone);
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
        if (redis instanceof RedisClusterClient cluster) {
            return clusterProblem(cluster);
        }
        try {
            return "PONG".equalsIgnoreCase(redis.ping()) ? Optional.empty()
                    : Optional.of(topology() + " does not answer PING");
        } catch (JedisException e) {
            return Optional.of(topology() + " does not answer PING (" + e.getClass().getSimpleName() + ")");
        }
    }

    private Optional<String> clusterProblem(RedisClusterClient cluster) {
        Map<String, ConnectionPool> nodes = new java.util.TreeMap<>(cluster.getClusterNodes());
        String view = null;
        String reporter = null;
        // The cluster's own view, from the first node that answers.
        for (Map.Entry<String, ConnectionPool> node : nodes.entrySet()) {
            try (Connection c = node.getValue().getResource()) {
                c.sendCommand(Protocol.Command.CLUSTER, "INFO");
                String info = c.getBulkReply();
                if (!info.contains("cluster_state:ok")) {
                    return Optional.of("cluster state is not ok (as " + node.getKey() + " reports it)");
                }
                c.sendCommand(Protocol.Command.CLUSTER, "NODES");
                view = c.getBulkReply();
                reporter = node.getKey();
                break;
            } catch (JedisException e) {
                // ask the next node
            }
        }
        if (view == null) {
            return Optional.of("cluster: no node answers (" + String.join(",", nodes.keySet()) + ")");
        }
        List<String> down = new java.util.ArrayList<>();
        for (String line : view.split("\n")) {
            String[] f = line.trim().split(" ");
            // id address flags master-id ping pong epoch link-state slot...: a master with slots.
            if (f.length < 9 || !f[2].contains("master")) {
                continue;
            }
            String address = f[1].contains("@") ? f[1].substring(0, f[1].indexOf('@')) : f[1];
            if (f[2].contains("fail") && !f[2].contains("fail?")) {
                down.add(address + " (failed, serving slots " + f[8] + (f.length > 9 ? "..." : "") + ")");
                continue;
            }
            ConnectionPool pool = nodes.get(address);
            try (Connection c = pool == null ? new Connection(HostAndPort.from(address), nodeConfig) : pool.getResource()) {
                c.ping();
            } catch (JedisException e) {
                down.add(address + " (" + e.getClass().getSimpleName() + ")");
            }
        }
        return down.isEmpty() ? Optional.empty()
                : Optional.of("cluster master(s) not answering PING: " + String.join(", ", down) + " (as " + reporter + " reports the cluster)");
    }

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public void close() {
        redis.close();
    }
}
