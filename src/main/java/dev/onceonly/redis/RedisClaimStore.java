package dev.onceonly.redis;

import dev.onceonly.support.LogId;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.SslVerifyMode;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * {@link ClaimStore} on Redis through Jedis. Every primitive is ONE round trip: a Lua script on one
 * key, called by SHA ({@code EVALSHA}) and loaded again on {@code NOSCRIPT} (after a restart or a
 * fail-over). One key per call, so it works unchanged on standalone, Sentinel and Cluster.
 *
 * <h2>Values</h2>
 * <ul>
 *   <li>in progress: {@code P<token>|<fingerprint>} with the lease as TTL;</li>
 *   <li>done: {@code D<fingerprint>} with the retention as TTL. No timestamp: the TTL already says
 *       when it goes, and every byte costs memory across millions of retained keys.</li>
 * </ul>
 */
public final class RedisClaimStore implements ClaimStore {

    /** SET NX PX, and on failure the current value in the same call: never GET-then-SET. */
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

    private final UnifiedJedis redis;
    /** How long Redis counts as not answering after a command timed out. */
    private final long quietNanos;
    /**
     * Until when ({@link System#nanoTime()}) commands fail at once, without asking Redis: after a
     * timeout, every message would otherwise wait its own timeout and a paused Redis would stall
     * the consumer for the whole pause. 0 when Redis answers.
     */
    private volatile long quietUntil;

    /**
     * Wraps a client the caller built (tests, benchmarks). The store closes it.
     *
     * @param redis the client
     */
    public RedisClaimStore(UnifiedJedis redis) {
        this(redis, Duration.ZERO);
    }

    /**
     * Wraps a client the caller built. The store closes it.
     *
     * @param redis             the client
     * @param quietAfterTimeout after a command timed out, further commands fail at once for this
     *                          long (then one asks Redis again); zero to always ask
     */
    public RedisClaimStore(UnifiedJedis redis, Duration quietAfterTimeout) {
        this.redis = redis;
        this.quietNanos = quietAfterTimeout.toNanos();
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
        RedisClaimStore store = new RedisClaimStore(client(settings), quiet);
        store.checkEvictionPolicy();
        LogId.ONCE0006I.log(settings.describe(), settings.user() == null ? "no ACL user" : "user " + settings.user());
        return store;
    }

    static UnifiedJedis client(RedisSettings s) {
        JedisClientConfig config = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis((int) s.connectTimeout().toMillis())
                .socketTimeoutMillis((int) s.socketTimeout().toMillis())
                .user(s.user())
                .password(s.password())
                .database(s.database())
                .ssl(s.tls())
                .sslOptions(s.tls() ? sslOptions(s.trust()) : null)
                .clientName("onceonly")
                .build();
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
        Object v = call(CLAIM_SCRIPT, "claim", key, inProgress(token, fingerprint), Long.toString(lease.toMillis()));
        if (v == null) {
            return ClaimResult.ACQUIRED;
        }
        String value = (String) v;
        if (value.startsWith(holderPrefix(token))) {
            // Our own claim: a first attempt whose reply was lost (see call) did take the key.
            return ClaimResult.ACQUIRED;
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
        String done = "D" + fingerprint;
        // A retry after a lost reply finds the key already done, most likely by the first attempt:
        // that is the holder's own completion, not a lost lease (else a false ONCE0103W).
        return holder(call(COMPLETE_SCRIPT, "complete", reply -> isApplied(reply) || !done.equals(redis.get(key)) ? reply : APPLIED,
                key, holderPrefix(token), done, Long.toString(retention.toMillis())));
    }

    @Override
    public HolderResult release(String key, String token) {
        // A retry after a lost reply finds the key gone, most likely deleted by the first attempt.
        return holder(call(RELEASE_SCRIPT, "release", reply -> isApplied(reply) || redis.exists(key) ? reply : APPLIED,
                key, holderPrefix(token)));
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return holder(call(EXTEND_SCRIPT, "extend", UnaryOperator.identity(), key, holderPrefix(token),
                Long.toString(lease.toMillis())));
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

    private Object call(Script script, String operation, String key, String... args) {
        return call(script, operation, UnaryOperator.identity(), key, args);
    }

    /**
     * @param afterLostReply reads the reply of the retry that follows a connection lost mid-call,
     *                       when the first attempt may have been applied without its reply arriving
     */
    private Object call(Script script, String operation, UnaryOperator<Object> afterLostReply, String key, String... args) {
        long quiet = quietUntil;
        if (quiet != 0 && quiet - System.nanoTime() > 0) {
            throw new ClaimStoreException(name(), operation,
                    new java.io.IOException("Redis did not answer a moment ago (socket-timeout); not asked again yet"));
        }
        String[] keyAndArgs = prepend(key, args);
        try {
            try {
                return answered(evalsha(script, key, keyAndArgs));
            } catch (JedisConnectionException e) {
                if (timedOut(e)) {
                    // Redis is slow, paused or cut off: a second try would only double the wait. One
                    // command waits at most socket-timeout.
                    throw e;
                }
                // A pooled connection Redis closed meanwhile (restart, fail-over, idle timeout): the
                // pool drops it; one retry on another connection. Safe to repeat: claim recognises
                // its own token, and the holder-checked scripts change nothing a second time.
                return answered(afterLostReply.apply(evalsha(script, key, keyAndArgs)));
            }
        } catch (JedisException e) {
            if (quietNanos > 0 && timedOut(e)) {
                quietUntil = System.nanoTime() + quietNanos;
            }
            throw new ClaimStoreException(name(), operation, e);
        }
    }

    private Object answered(Object reply) {
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
            // Script cache lost (restart, fail-over, SCRIPT FLUSH): load it on the key's node, retry once.
            redis.scriptLoad(script.source, key);
            return redis.evalsha(script.sha, 1, keyAndArgs);
        }
    }

    private static String[] prepend(String key, String[] args) {
        String[] all = new String[args.length + 1];
        all[0] = key;
        System.arraycopy(args, 0, all, 1, args.length);
        return all;
    }

    /** Whether Redis answers a PING now (for health checks). */
    @Override
    public Optional<String> problem() {
        try {
            return "PONG".equalsIgnoreCase(redis.ping()) ? Optional.empty() : Optional.of("Redis does not answer PING");
        } catch (JedisException e) {
            return Optional.of("Redis does not answer PING (" + e.getClass().getSimpleName() + ")");
        }
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
