package dev.onceonly.internal.redis;

import dev.onceonly.internal.config.Property;
import dev.onceonly.internal.config.Property.Type;
import dev.onceonly.internal.config.PropertySet;
import dev.onceonly.internal.support.Durations;

import java.util.function.UnaryOperator;

/** The catalogue of the Redis claim store's properties ({@code onceonly.redis.*}), read by {@code RedisConfig}. */
public final class RedisProperties {

    private RedisProperties() {
    }

    /** The Redis claim store's settings. */
    public static final PropertySet REDIS = new PropertySet("Redis claim store (`onceonly.store=redis`)", "redis.RedisConfig",
            "Read only with `onceonly.store=redis`. Passwords are never logged nor shown in an error.", UnaryOperator.identity());

    static final Property URL = REDIS.add(Property.of("onceonly.redis.url", Type.TEXT, "redis://localhost:6379",
            "`redis://` or `rediss://` (TLS), with optional `user:password@` (percent escapes decoded) and `/db`."));
    static final Property MODE = REDIS.add(Property.choice("onceonly.redis.mode", "standalone",
            "`standalone`, `sentinel` or `cluster` (cluster: database 0 only).", "standalone", "sentinel", "cluster"));
    static final Property NODES = REDIS.add(Property.of("onceonly.redis.nodes", Type.LIST, null,
            "Sentinels or cluster seed nodes, `host:port,...`.").shownAs("the URL's host and port"));
    static final Property SENTINEL_MASTER = REDIS.add(Property.of("onceonly.redis.sentinel-master", Type.TEXT, null,
            "Master name; required in sentinel mode."));
    static final Property USER = REDIS.add(Property.of("onceonly.redis.user", Type.TEXT, null,
            "ACL user.").shownAs("the URL's"));
    static final Property PASSWORD = REDIS.add(Property.of("onceonly.redis.password", Type.SECRET, null,
            "Password; never logged.").shownAs("the URL's"));
    static final Property SENTINEL_USER = REDIS.add(Property.of("onceonly.redis.sentinel-user", Type.TEXT, null,
            "ACL user of the sentinels themselves, when they differ from the data nodes'."));
    static final Property SENTINEL_PASSWORD = REDIS.add(Property.of("onceonly.redis.sentinel-password", Type.SECRET, null,
            "Password (`requirepass`) of the sentinels themselves, when it differs from the data nodes'; "
                    + "never logged."));
    static final Property SENTINEL_TLS = REDIS.add(Property.flag("onceonly.redis.sentinel-tls", false,
            "Whether the sentinels are reached over TLS.").shownAs("as the URL's scheme"));
    static final Property TRUSTSTORE = REDIS.add(Property.of("onceonly.redis.tls.truststore", Type.TEXT, null,
            "Whom `rediss://` trusts: a readable trust store file with your CA.").shownAs("the JVM's"));
    static final Property TRUSTSTORE_PASSWORD = REDIS.add(Property.of("onceonly.redis.tls.truststore-password", Type.SECRET, null,
            "The trust store's password."));
    static final Property TRUSTSTORE_TYPE = REDIS.add(Property.of("onceonly.redis.tls.truststore-type", Type.TEXT, "PKCS12",
            "The trust store's type, e.g. `PKCS12` or `JKS`."));
    static final Property VERIFY_HOSTNAME = REDIS.add(Property.flag("onceonly.redis.tls.verify-hostname", true,
            "The server's certificate must name the host connected to (without it, any certificate from a trusted CA "
                    + "could stand in for Redis)."));
    static final Property CONNECT_TIMEOUT = REDIS.add(Property.duration("onceonly.redis.connect-timeout", "2s",
            "Timeout of opening a connection to Redis."));
    static final Property SOCKET_TIMEOUT = REDIS.add(Property.duration("onceonly.redis.socket-timeout", "2s",
            "Read timeout of one command. A command to a Redis that does not answer (paused, cut off) fails "
                    + "after Jedis's read of it, about twice `socket-timeout`, and is never retried; only a connection "
                    + "Redis closed is retried once, on another connection. After a timeout, commands fail at once for "
                    + "one `socket-timeout` (then one asks Redis again), so a paused Redis costs the consumer one "
                    + "wait, not one per message. Waiting for a pooled connection is bounded by `socket-timeout` too."));
    static final Property POOL_SIZE = REDIS.add(Property.whole("onceonly.redis.pool-size", 16, 1, 10_000,
            "Connections in the pool."));
    // WAIT needs the count of replicas, not a flag: 0 (off) is the default, negative is refused by the range.
    static final Property WAIT_REPLICAS = REDIS.add(Property.whole("onceonly.redis.wait-replicas", 0, 0, 100,
            "After marking a key done, wait until this many replicas acknowledged the write (Redis `WAIT`, "
                    + "on the connection that wrote it, in the same round trip); `0`: off. See \"Sentinel and Cluster\" "
                    + "in the README."));
    static final Property WAIT_TIMEOUT = REDIS.add(Property.duration("onceonly.redis.wait-timeout", Durations.format(RedisSettings.DEFAULT_WAIT_TIMEOUT),
            "How long a completion waits for those replicas at most; below `onceonly.redis.socket-timeout`."));
    static final Property NATIVE_CLAIM = REDIS.add(Property.choice("onceonly.redis.native-claim", "auto",
            "`auto`: a claim is one native `SET key value NX PX lease GET` (Redis 7.0 and later); a server "
                    + "that refuses it (before 7.0: a syntax error, nothing written) is noticed on the first claim, "
                    + "logged (`ONCE0110I`), and from then on, until restart, every claim is the Lua script, which "
                    + "answers the same but for the fence: only the script gives one (`IdempotencyContext.fence()`). `off`: always the "
                    + "script. See `BENCHMARKS.md` for what each costs, and `onceonly.fencing`.", "auto", "off"));
}
