package dev.onceonly.internal.redis;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.config.ConfigReader;
import dev.onceonly.internal.config.OnceOnlyProperties;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import static dev.onceonly.internal.redis.RedisProperties.*;

/**
 * Reads and validates the Redis claim store's properties ({@link RedisProperties}), once, at
 * startup, through the shared {@link ConfigReader}: the URL with its credentials, the topology,
 * timeouts, TLS trust and replica waits. A password never reaches an error message or a log line.
 */
public final class RedisConfig {

    private RedisConfig() {
    }

    /**
     * Reads the Redis settings.
     *
     * @param config a reader of {@code onceonly.*} properties ({@link ConfigReader#of})
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property, never showing a password
     */
    public static RedisSettings read(ConfigReader config) {
        String url = config.text(URL);
        String expected = "a URL such as redis://[user:password@]host:6379[/db] or rediss://...";
        int scheme = url.indexOf("://");
        // The user-info ends at the LAST '@': a password may contain '@', '/' or ':' unencoded.
        int at = url.lastIndexOf('@');
        String userInfo = scheme >= 0 && at > scheme ? url.substring(scheme + 3, at) : null;
        String withoutUserInfo = userInfo == null ? url : url.substring(0, scheme + 3) + url.substring(at + 1);
        URI uri;
        try {
            uri = new URI(withoutUserInfo);
        } catch (URISyntaxException e) {
            throw config.invalid(URL, redactUrl(url), expected);
        }
        if (!"redis".equals(uri.getScheme()) && !"rediss".equals(uri.getScheme()) || uri.getHost() == null) {
            throw config.invalid(URL, redactUrl(url), expected);
        }
        String user = null;
        String password = null;
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                user = colon == 0 ? null : percentDecode(userInfo.substring(0, colon));
                password = percentDecode(userInfo.substring(colon + 1));
            } else {
                password = percentDecode(userInfo);
            }
        }
        user = config.string(USER).orElse(user);
        password = config.secret(PASSWORD).orElse(password);
        int database = 0;
        String path = uri.getPath();
        if (path != null && path.length() > 1) {
            try {
                database = Integer.parseInt(path.substring(1));
            } catch (NumberFormatException e) {
                throw config.invalid(URL, redactUrl(url), "a database number as path, e.g. redis://host:6379/0");
            }
        }
        RedisSettings.Mode mode = RedisSettings.Mode.valueOf(
                config.choice(MODE).toUpperCase(Locale.ROOT));
        if (mode == RedisSettings.Mode.CLUSTER && database != 0) {
            throw config.invalid(URL, redactUrl(url), "database 0 with onceonly.redis.mode=cluster "
                    + "(Redis Cluster has only database 0)");
        }
        String hostPort = uri.getHost() + ":" + (uri.getPort() < 0 ? 6379 : uri.getPort());
        List<String> nodes = config.string(NODES)
                .map(n -> Arrays.stream(n.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList())
                .orElse(List.of(hostPort));
        for (String node : nodes) {
            if (!node.matches("[^:\\s]+:\\d{1,5}")) {
                throw config.invalid(NODES, node, "a comma-separated list of host:port");
            }
        }
        String master = config.string(SENTINEL_MASTER).orElse("");
        if (mode == RedisSettings.Mode.SENTINEL && master.isEmpty()) {
            throw config.invalid(SENTINEL_MASTER, "", "the Sentinel master name (required with onceonly.redis.mode=sentinel)");
        }
        Duration connect = config.duration(CONNECT_TIMEOUT);
        Duration socket = config.duration(SOCKET_TIMEOUT);
        int pool = config.intValue(POOL_SIZE);
        boolean tls = "rediss".equals(uri.getScheme());
        RedisSettings.SentinelAuth sentinels = new RedisSettings.SentinelAuth(config.string(SENTINEL_USER).orElse(null),
                config.secret(SENTINEL_PASSWORD).orElse(null), config.bool(SENTINEL_TLS, tls));
        RedisSettings.TlsTrust trust = new RedisSettings.TlsTrust(
                config.string(TRUSTSTORE).map(java.nio.file.Path::of).orElse(null),
                config.secret(TRUSTSTORE_PASSWORD).orElse(null),
                config.text(TRUSTSTORE_TYPE),
                config.bool(VERIFY_HOSTNAME));
        if (trust.truststore() != null && !java.nio.file.Files.isReadable(trust.truststore())) {
            throw config.invalid(TRUSTSTORE, trust.truststore().toString(),
                    "a readable trust store file");
        }
        int waitReplicas = config.intValue(WAIT_REPLICAS);
        Duration waitTimeout = config.duration(WAIT_TIMEOUT);
        if (waitReplicas > 0 && waitTimeout.compareTo(socket) >= 0) {
            // A WAIT longer than the read timeout would be cut off by it and reported as Redis down.
            throw config.invalid(WAIT_TIMEOUT, waitTimeout.toString(),
                    "a duration below onceonly.redis.socket-timeout (" + socket + ")");
        }
        RedisSettings.NativeClaim nativeClaim = RedisSettings.NativeClaim.valueOf(
                config.choice(NATIVE_CLAIM).toUpperCase(Locale.ROOT));
        if (nativeClaim == RedisSettings.NativeClaim.AUTO && config.bool(OnceOnlyProperties.FENCING)) {
            // The native SET NX PX GET cannot read Redis's clock: its claims carry no fence.
            throw config.invalid(NATIVE_CLAIM, "auto", "off with " + OnceOnlyProperties.FENCING.name()
                    + "=true: only the claim script gives fences");
        }
        return new RedisSettings(mode, nodes, master, tls, user, password, database, connect, socket, pool, sentinels, trust,
                waitReplicas, waitTimeout, nativeClaim);
    }

    /**
     * Decodes {@code %XX} escapes (UTF-8) and nothing else: unlike form decoding, {@code +} stays a
     * plus sign. A {@code %} not followed by two hex digits stays as it is.
     */
    static String percentDecode(String s) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length());
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < raw.length; i++) {
            if (raw[i] == '%' && i + 2 < raw.length && hex(raw[i + 1]) >= 0 && hex(raw[i + 2]) >= 0) {
                out.write(hex(raw[i + 1]) * 16 + hex(raw[i + 2]));
                i += 2;
            } else {
                out.write(raw[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static int hex(byte b) {
        return Character.digit(b, 16);
    }

    /**
     * The URL without its user-info (everything up to the last {@code @}), so a password never
     * reaches a log or an error message, whatever characters it holds.
     */
    static String redactUrl(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (at < 0) {
            return url;
        }
        return (scheme >= 0 && scheme < at ? url.substring(0, scheme + 3) : "") + "***" + url.substring(at);
    }
}
