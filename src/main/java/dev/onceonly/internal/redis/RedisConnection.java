package dev.onceonly.internal.redis;

import dev.onceonly.internal.support.LogId;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.RedisSentinelClient;
import redis.clients.jedis.SslOptions;
import redis.clients.jedis.SslVerifyMode;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The Redis store's client and its topology: builds the Jedis client for standalone, Sentinel or
 * Cluster from {@link RedisSettings}, runs the startup checks, opens a pipeline on ONE connection
 * (the master's, or a cluster key's master's) and names the topology for readiness.
 *
 * <p>Contract: owns the client and closes it; knows nothing of claims. Commands that any pooled
 * connection may carry go through {@link #jedis()}; what must share one connection (a script and
 * the {@code WAIT} after it, a batch) goes through {@link #pipeline()} or {@link #pipelineFor}.
 */
final class RedisConnection implements AutoCloseable {

    private final UnifiedJedis redis;
    /**
     * Whether batches may be pipelined: only where {@link UnifiedJedis#pipelined()} is one connection
     * to the one master. A cluster's keys live on several masters, and a command redirected in a
     * pipeline would leave the commands after it on the wrong node: there, a batch is single calls.
     */
    private final boolean pipelinesBatches;
    /** Sentinel mode: the master's name; standalone: host:port, when known (from settings); for {@link #topology()}. */
    private final String sentinelMaster;
    private final String standalone;
    /** How to open a connection to a cluster node the client has no pool for yet (health only). */
    private final JedisClientConfig nodeConfig;

    /**
     * Wraps a client the caller built; its topology is then named from the client alone.
     *
     * @param redis the client, closed by {@link #close()}
     */
    RedisConnection(UnifiedJedis redis) {
        this(redis, "", null, DefaultJedisClientConfig.builder().build());
    }

    private RedisConnection(UnifiedJedis redis, String sentinelMaster, String standalone, JedisClientConfig nodeConfig) {
        this.redis = redis;
        this.pipelinesBatches = redis instanceof RedisClient || redis instanceof RedisSentinelClient;
        this.sentinelMaster = sentinelMaster;
        this.standalone = standalone;
        this.nodeConfig = nodeConfig;
    }

    /**
     * Builds the client as configured; connects lazily, so it does not fail when Redis is down.
     *
     * @param settings how to reach Redis
     * @return the connection
     */
    static RedisConnection open(RedisSettings settings) {
        return new RedisConnection(client(settings), settings.sentinelMaster(),
                settings.mode() == RedisSettings.Mode.STANDALONE ? settings.nodes().get(0) : null, clientConfig(settings));
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

    /**
     * Warns (ONCE0003W) when Redis may evict claims; silently evicted claims let duplicates through.
     * Only {@code noeviction} is safe: every claim has a TTL, so {@code volatile-*} policies pick
     * claims as readily as {@code allkeys-*} ones. Never throws.
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

    /** {@return the client, for commands any pooled connection may carry} */
    UnifiedJedis jedis() {
        return redis;
    }

    /** {@return whether {@link #pipeline()} reaches every key: standalone and Sentinel, not a cluster} */
    boolean pipelinesBatches() {
        return pipelinesBatches;
    }

    /** {@return how to open a connection to a cluster node the client has no pool for yet} */
    JedisClientConfig nodeConfig() {
        return nodeConfig;
    }

    /** A pipeline on one connection: to {@code node} if given (a redirection), else to the key's master. */
    Pipeline pipelineFor(String key, HostAndPort node) {
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
    Pipeline pipeline() {
        return (Pipeline) redis.pipelined();
    }

    /**
     * {@return how the store reaches Redis, for readiness: {@code standalone host:port},
     * {@code sentinel master <name> at host:port} (the master the sentinels name now) or
     * {@code cluster, nodes known: host:port,...}; addresses only, never credentials}
     */
    String topology() {
        if (redis instanceof RedisSentinelClient sentinel) {
            HostAndPort master = sentinel.getCurrentMaster();
            return "sentinel master " + sentinelMaster + " at " + (master == null ? "unknown" : master);
        }
        if (redis instanceof RedisClusterClient cluster) {
            return "cluster, nodes known: " + String.join(",", new java.util.TreeSet<>(cluster.getClusterNodes().keySet()));
        }
        return "standalone" + (standalone == null ? "" : " " + standalone);
    }

    @Override
    public void close() {
        redis.close();
    }
}
