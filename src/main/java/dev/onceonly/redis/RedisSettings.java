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
 */
public record RedisSettings(Mode mode, List<String> nodes, String sentinelMaster, boolean tls, String user,
                            String password, int database, Duration connectTimeout, Duration socketTimeout,
                            int poolSize) {

    public enum Mode { STANDALONE, SENTINEL, CLUSTER }

    public RedisSettings {
        nodes = List.copyOf(nodes);
    }

    /** For logs: mode and nodes, never credentials. */
    public String describe() {
        return mode.name().toLowerCase(java.util.Locale.ROOT) + " " + String.join(",", nodes) + (tls ? " tls" : "")
                + (mode == Mode.SENTINEL ? " master=" + sentinelMaster : "");
    }

    @Override
    public String toString() {
        return "RedisSettings[" + describe() + ", user=" + user + ", password=" + (password == null ? "none" : "***") + "]";
    }
}
