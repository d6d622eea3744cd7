package dev.onceonly.internal.redis;

import java.time.Duration;
import java.util.List;

/**
 * How to reach Redis. Built and validated once, at startup, by {@code RedisConfig}.
 *
 * @param mode            standalone, sentinel or cluster
 * @param nodes           standalone: one host:port; sentinel: the sentinels; cluster: seed nodes
 * @param sentinelMaster  master name (sentinel mode only), else empty
 * @param tls             whether to use TLS ({@code rediss://})
 * @param user            ACL user, or {@code null}
 * @param password        password, or {@code null}. Never logged; {@link #toString()} hides it.
 * @param database        database index (standalone and sentinel)
 * @param connectTimeout  connection timeout
 * @param socketTimeout   read timeout of one command
 * @param poolSize        maximum connections in the pool
 * @param sentinels       how to reach the sentinels themselves (sentinel mode): their own ACL user,
 *                        password and TLS, which may differ from the data nodes'
 * @param trust           whom TLS connections trust, and whether the host name is checked
 * @param waitReplicas    after marking a key done, how many replicas must acknowledge the write
 *                        (Redis {@code WAIT}) before it counts as safe from a fail-over; 0: do not wait
 * @param waitTimeout     how long one completion waits for those replicas at most (below the socket timeout)
 * @param nativeClaim     whether a claim is sent as the native {@code SET NX PX GET} where Redis accepts it
 */
public record RedisSettings(Mode mode, List<String> nodes, String sentinelMaster, boolean tls, String user,
                            String password, int database, Duration connectTimeout, Duration socketTimeout,
                            int poolSize, SentinelAuth sentinels, TlsTrust trust, int waitReplicas, Duration waitTimeout,
                            NativeClaim nativeClaim) {

    /** {@code onceonly.redis.wait-timeout} when not set. */
    public static final Duration DEFAULT_WAIT_TIMEOUT = Duration.ofMillis(100);

    /** How the nodes are organised. */
    public enum Mode {
        /** One Redis server. */
        STANDALONE,
        /** A master found through Redis Sentinel. */
        SENTINEL,
        /** Redis Cluster. */
        CLUSTER
    }

    /** How a claim is sent ({@code onceonly.redis.native-claim}). */
    public enum NativeClaim {
        /**
         * {@code SET key value NX PX lease GET}, one native command, until Redis refuses it (servers
         * before 7.0 answer a syntax error, and nothing is written); from then on the Lua script.
         */
        AUTO,
        /** Always the Lua script ({@code EVALSHA}), without trying the native command first. */
        OFF
    }

    /**
     * Credentials and TLS of the sentinels.
     *
     * @param user     ACL user, or {@code null}
     * @param password password ({@code requirepass} of the sentinels), or {@code null}; never logged
     * @param tls      whether the sentinels are reached over TLS
     */
    public record SentinelAuth(String user, String password, boolean tls) {
        /** No credentials, no TLS. */
        public static final SentinelAuth NONE = new SentinelAuth(null, null, false);

        @Override
        public String toString() {
            return "SentinelAuth[user=" + user + ", password=" + (password == null ? "none" : "***") + ", tls=" + tls + "]";
        }
    }

    /**
     * Trust for TLS connections (data nodes and sentinels).
     *
     * @param truststore     a trust store file with the CA(s) to trust, or {@code null} for the JVM's
     * @param password       its password, or {@code null}; never logged
     * @param type           its type, e.g. {@code PKCS12} or {@code JKS}
     * @param verifyHostname whether the server's certificate must name the host connected to (on
     *                       unless switched off: without it anyone with a certificate from a
     *                       trusted CA can stand in for Redis)
     */
    public record TlsTrust(java.nio.file.Path truststore, String password, String type, boolean verifyHostname) {
        /** The JVM's trust store, host names verified. */
        public static final TlsTrust DEFAULT = new TlsTrust(null, null, "PKCS12", true);

        @Override
        public String toString() {
            return "TlsTrust[truststore=" + truststore + ", type=" + type + ", verifyHostname=" + verifyHostname + "]";
        }
    }

    /**
     * Copies the nodes; {@code null} sentinel credentials and trust become the defaults.
     *
     * @param mode           standalone, sentinel or cluster
     * @param nodes          standalone: one host:port; sentinel: the sentinels; cluster: seed nodes
     * @param sentinelMaster master name (sentinel mode only), else empty
     * @param tls            whether to use TLS ({@code rediss://})
     * @param user           ACL user, or {@code null}
     * @param password       password, or {@code null}
     * @param database       database index (standalone and sentinel)
     * @param connectTimeout connection timeout
     * @param socketTimeout  read timeout of one command
     * @param poolSize       maximum connections in the pool
     * @param sentinels      how to reach the sentinels, or {@code null} for {@link SentinelAuth#NONE}
     * @param trust          whom TLS connections trust, or {@code null} for {@link TlsTrust#DEFAULT}
     * @param waitReplicas   replicas that must acknowledge a completion; 0 (not negative): do not wait
     * @param waitTimeout    how long a completion waits for them, or {@code null} for {@link #DEFAULT_WAIT_TIMEOUT}
     * @param nativeClaim    how a claim is sent, or {@code null} for {@link NativeClaim#AUTO}
     * @throws IllegalArgumentException if {@code waitReplicas} is negative, or positive with a
     *                                  {@code waitTimeout} not below {@code socketTimeout}
     */
    public RedisSettings {
        nodes = List.copyOf(nodes);
        sentinels = sentinels == null ? SentinelAuth.NONE : sentinels;
        trust = trust == null ? TlsTrust.DEFAULT : trust;
        waitTimeout = waitTimeout == null ? DEFAULT_WAIT_TIMEOUT : waitTimeout;
        nativeClaim = nativeClaim == null ? NativeClaim.AUTO : nativeClaim;
        if (waitReplicas < 0) {
            throw new IllegalArgumentException("waitReplicas must not be negative: " + waitReplicas);
        }
        if (waitReplicas > 0 && waitTimeout.compareTo(socketTimeout) >= 0) {
            // WAIT blocks the read: as long as the socket timeout, it would be cut off and look like Redis down.
            throw new IllegalArgumentException("waitTimeout " + waitTimeout + " must be below socketTimeout " + socketTimeout);
        }
    }

    /**
     * Settings that do not wait for replicas after a completion.
     *
     * @param mode           standalone, sentinel or cluster
     * @param nodes          standalone: one host:port; sentinel: the sentinels; cluster: seed nodes
     * @param sentinelMaster master name (sentinel mode only), else empty
     * @param tls            whether to use TLS ({@code rediss://})
     * @param user           ACL user, or {@code null}
     * @param password       password, or {@code null}
     * @param database       database index (standalone and sentinel)
     * @param connectTimeout connection timeout
     * @param socketTimeout  read timeout of one command
     * @param poolSize       maximum connections in the pool
     * @param sentinels      how to reach the sentinels, or {@code null} for {@link SentinelAuth#NONE}
     * @param trust          whom TLS connections trust, or {@code null} for {@link TlsTrust#DEFAULT}
     */
    public RedisSettings(Mode mode, List<String> nodes, String sentinelMaster, boolean tls, String user, String password,
                         int database, Duration connectTimeout, Duration socketTimeout, int poolSize, SentinelAuth sentinels,
                         TlsTrust trust) {
        this(mode, nodes, sentinelMaster, tls, user, password, database, connectTimeout, socketTimeout, poolSize,
                sentinels, trust, 0, DEFAULT_WAIT_TIMEOUT, NativeClaim.AUTO);
    }

    /**
     * These settings, waiting for replicas after each completion.
     *
     * @param replicas replicas that must acknowledge a completion; 0: do not wait
     * @param timeout  how long a completion waits for them at most
     * @return the new settings
     */
    public RedisSettings withWait(int replicas, Duration timeout) {
        return new RedisSettings(mode, nodes, sentinelMaster, tls, user, password, database, connectTimeout, socketTimeout,
                poolSize, sentinels, trust, replicas, timeout, nativeClaim);
    }

    /**
     * These settings, sending claims as configured.
     *
     * @param claim how a claim is sent
     * @return the new settings
     */
    public RedisSettings withNativeClaim(NativeClaim claim) {
        return new RedisSettings(mode, nodes, sentinelMaster, tls, user, password, database, connectTimeout, socketTimeout,
                poolSize, sentinels, trust, waitReplicas, waitTimeout, claim);
    }

    /**
     * Settings with the JVM's trust for TLS, host names verified.
     *
     * @param mode           standalone, sentinel or cluster
     * @param nodes          standalone: one host:port; sentinel: the sentinels; cluster: seed nodes
     * @param sentinelMaster master name (sentinel mode only), else empty
     * @param tls            whether to use TLS ({@code rediss://})
     * @param user           ACL user, or {@code null}
     * @param password       password, or {@code null}
     * @param database       database index (standalone and sentinel)
     * @param connectTimeout connection timeout
     * @param socketTimeout  read timeout of one command
     * @param poolSize       maximum connections in the pool
     * @param sentinels      how to reach the sentinels, or {@code null} for {@link SentinelAuth#NONE}
     */
    public RedisSettings(Mode mode, List<String> nodes, String sentinelMaster, boolean tls, String user, String password,
                         int database, Duration connectTimeout, Duration socketTimeout, int poolSize, SentinelAuth sentinels) {
        this(mode, nodes, sentinelMaster, tls, user, password, database, connectTimeout, socketTimeout, poolSize,
                sentinels, TlsTrust.DEFAULT);
    }

    /**
     * Settings whose sentinels (if any) need no credentials or TLS, with the JVM's trust for TLS.
     *
     * @param mode           standalone, sentinel or cluster
     * @param nodes          standalone: one host:port; sentinel: the sentinels; cluster: seed nodes
     * @param sentinelMaster master name (sentinel mode only), else empty
     * @param tls            whether to use TLS ({@code rediss://})
     * @param user           ACL user, or {@code null}
     * @param password       password, or {@code null}
     * @param database       database index (standalone and sentinel)
     * @param connectTimeout connection timeout
     * @param socketTimeout  read timeout of one command
     * @param poolSize       maximum connections in the pool
     */
    public RedisSettings(Mode mode, List<String> nodes, String sentinelMaster, boolean tls, String user, String password,
                         int database, Duration connectTimeout, Duration socketTimeout, int poolSize) {
        this(mode, nodes, sentinelMaster, tls, user, password, database, connectTimeout, socketTimeout, poolSize,
                SentinelAuth.NONE);
    }

    /** {@return mode and nodes for logs, never credentials} */
    public String describe() {
        return mode.name().toLowerCase(java.util.Locale.ROOT) + " " + String.join(",", nodes) + (tls ? " tls" : "")
                + (mode == Mode.SENTINEL ? " master=" + sentinelMaster : "")
                + (waitReplicas > 0 ? " wait=" + waitReplicas + "/" + waitTimeout.toMillis() + "ms" : "")
                + (nativeClaim == NativeClaim.OFF ? " native-claim=off" : "");
    }

    @Override
    public String toString() {
        return "RedisSettings[" + describe() + ", user=" + user + ", password=" + (password == null ? "none" : "***")
                + (mode == Mode.SENTINEL ? ", sentinels=" + sentinels : "") + "]";
    }
}
