package dev.onceonly.redis;

import java.time.Duration;
import java.util.List;

/**
 * How to reach Redis. Built and validated once by the configuration layer.
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
 */
public record RedisSettings(Mode mode, List<String> nodes, String sentinelMaster, boolean tls, String user,
                            String password, int database, Duration connectTimeout, Duration socketTimeout,
                            int poolSize, SentinelAuth sentinels) {

    public enum Mode { STANDALONE, SENTINEL, CLUSTER }

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

    public RedisSettings {
        nodes = List.copyOf(nodes);
        sentinels = sentinels == null ? SentinelAuth.NONE : sentinels;
    }

    /** Settings whose sentinels (if any) need no credentials or TLS. */
    public RedisSettings(Mode mode, List<String> nodes, String sentinelMaster, boolean tls, String user, String password,
                         int database, Duration connectTimeout, Duration socketTimeout, int poolSize) {
        this(mode, nodes, sentinelMaster, tls, user, password, database, connectTimeout, socketTimeout, poolSize,
                SentinelAuth.NONE);
    }

    /** For logs: mode and nodes, never credentials. */
    public String describe() {
        return mode.name().toLowerCase(java.util.Locale.ROOT) + " " + String.join(",", nodes) + (tls ? " tls" : "")
                + (mode == Mode.SENTINEL ? " master=" + sentinelMaster : "");
    }

    @Override
    public String toString() {
        return "RedisSettings[" + describe() + ", user=" + user + ", password=" + (password == null ? "none" : "***")
                + (mode == Mode.SENTINEL ? ", sentinels=" + sentinels : "") + "]";
    }
}
