package dev.onceonly.config;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.engine.ConsumerSettings;
import dev.onceonly.engine.KeyDeriver;
import dev.onceonly.engine.RetryRule;
import dev.onceonly.redis.RedisSettings;
import dev.onceonly.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.lang.reflect.Method;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads and validates OnceOnly's own MicroProfile Config properties ({@code onceonly.*}), once, at
 * startup, through the shared {@link ConfigReader}. Every error is an
 * {@link InvalidConfigurationException} naming the property and what it accepts.
 *
 * <p>Per-consumer settings are looked up in this order: {@code onceonly.consumers.<consumer>.<name>},
 * then {@code onceonly.<name>}, then the {@link IdempotentMessage} annotation, then the built-in
 * default.
 */
public final class OnceOnlyConfig {

    /** The prefix of every OnceOnly property. */
    public static final String PREFIX = "onceonly.";

    /**
     * Global settings (not per consumer).
     *
     * @param metrics whether MicroProfile Telemetry gets the guard's metrics ({@code onceonly.metrics.enabled})
     * @param tracing whether it gets spans of the guard's phases ({@code onceonly.tracing.enabled})
     * @param shutdownTimeout how long stopping waits for guarded messages still running before the
     *                claim store closes ({@code onceonly.shutdown-timeout})
     */
    public record Global(boolean enabled, String store, String keyPrefix, long memoryMaxEntries,
                         RedisSettings redis, boolean metrics, boolean tracing, Duration shutdownTimeout) {
    }

    /**
     * Settings of the ledger (shared by every consumer that uses it).
     *
     * @param retention      rows older than this are purged
     * @param purgeInterval  pause between two purge runs
     * @param purgeBatchSize rows deleted per purge transaction
     * @param createSchema   apply the shipped DDL at startup (development and tests; production applies it itself)
     * @param dataSource     JNDI name of the business data's JTA datasource, which the ledger writes through
     */
    public record LedgerSettings(Duration retention, Duration purgeInterval, int purgeBatchSize, boolean createSchema,
                                 String dataSource) {
    }

    /**
     * The transactional outbox's relay ({@code onceonly.outbox.*}); its rows are on the ledger's
     * datasource ({@code onceonly.ledger.datasource}) and its connection takes the connector-wide
     * {@code onceonly.rabbitmq.*} settings.
     *
     * @param sweepInterval  {@code sweep-interval}: pause between two sweeps
     * @param sweepAfter     {@code sweep-after}: the sweep takes rows written longer ago than this
     * @param batchSize      {@code batch-size}: rows per relay transaction
     * @param maxAttempts    {@code max-attempts}: broker refusals after which a row is parked
     * @param retention      {@code retention}: how long sent rows are kept
     * @param confirmTimeout {@code confirm-timeout}: how long a publish waits for the broker's confirm
     */
    public record OutboxSettings(Duration sweepInterval, Duration sweepAfter, int batchSize, int maxAttempts,
                                 Duration retention, Duration confirmTimeout) {
    }

    /**
     * What a guarded Jakarta Messaging listener ({@code onMessage(jakarta.jms.Message)}) does with a
     * refusal ({@code onceonly.jms.*}).
     *
     * @param deadLetterQueue   {@code dead-letter-queue}: JNDI name of the queue that CONFLICT and
     *                          REJECTED messages are moved to, in the listener's transaction, with
     *                          the reason; empty: they are rolled back like failures, so the
     *                          provider's redelivery limit and exception destination take them
     * @param connectionFactory {@code connection-factory}: JNDI name of the connection factory that
     *                          sends to it
     * @param retryDelay        {@code retry-delay}: how long a BUSY or RETRY delivery is held before
     *                          its rollback, so an immediate redelivery does not spend the provider's
     *                          redelivery limit while another holder is still at work
     */
    public record JmsSettings(String deadLetterQueue, String connectionFactory, Duration retryDelay) {
    }

    private final ConfigReader config;

    /**
     * A reader of OnceOnly's properties.
     *
     * @param config the application's configuration
     */
    public OnceOnlyConfig(Config config) {
        this.config = ConfigReader.of(config);
    }

    /**
     * Reads the global settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public Global global() {
        boolean enabled = config.bool("onceonly.enabled", true);
        String store = config.choice("onceonly.store", "redis", "redis", "memory", "database");
        String prefix = config.string("onceonly.key-prefix").orElse("oo:");
        if (prefix.contains("{") || prefix.length() > 32) {
            throw new InvalidConfigurationException("onceonly.key-prefix", prefix, "at most 32 characters without '{' (a Redis Cluster hash tag would put every key in one slot)");
        }
        long maxEntries = config.number("onceonly.memory.max-entries", 100_000, 1, Long.MAX_VALUE);
        RedisSettings redis = store.equals("redis") ? redis() : null;
        return new Global(enabled, store, prefix, maxEntries, redis,
                config.bool("onceonly.metrics.enabled", true), config.bool("onceonly.tracing.enabled", true),
                config.duration("onceonly.shutdown-timeout", Duration.ofSeconds(30)));
    }

    /**
     * Reads the ledger's settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public LedgerSettings ledger() {
        Duration retention = config.duration("onceonly.ledger.retention", Duration.ofDays(7));
        Duration interval = config.duration("onceonly.ledger.purge-interval", Duration.ofHours(1));
        // At most 100000: one purge transaction must stay short.
        int batch = config.intValue("onceonly.ledger.purge-batch-size", 1000, 1, 100_000);
        return new LedgerSettings(retention, interval, batch, config.bool("onceonly.ledger.create-schema", false),
                config.string("onceonly.ledger.datasource").orElse("jdbc/onceonly"));
    }

    /**
     * The claim store of the database-only mode ({@code onceonly.store=database}).
     *
     * @param dataSource    {@code onceonly.database-store.datasource}: JNDI name of a non-transactional
     *                      datasource on the database that has the table {@code onceonly_claim}
     * @param purgeInterval {@code onceonly.database-store.purge-interval}: pause between two purges of
     *                      expired claims
     */
    public record DatabaseStoreSettings(String dataSource, Duration purgeInterval) {
    }

    /**
     * Reads the database store's settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public DatabaseStoreSettings databaseStore() {
        Duration purge = config.duration("onceonly.database-store.purge-interval", Duration.ofMinutes(1));
        if (purge.isZero()) {
            throw new InvalidConfigurationException("onceonly.database-store.purge-interval", "0", "a positive duration, e.g. 1m");
        }
        return new DatabaseStoreSettings(config.string("onceonly.database-store.datasource").orElse("jdbc/onceonly-claims"), purge);
    }

    /**
     * Reads the outbox settings.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public OutboxSettings outbox() {
        Duration interval = config.duration("onceonly.outbox.sweep-interval", Duration.ofSeconds(10));
        Duration after = config.duration("onceonly.outbox.sweep-after", Duration.ofSeconds(30));
        Duration confirm = config.duration("onceonly.outbox.confirm-timeout", Duration.ofSeconds(10));
        if (interval.isZero()) {
            throw new InvalidConfigurationException("onceonly.outbox.sweep-interval", "0", "a positive duration, e.g. 10s");
        }
        if (confirm.isZero()) {
            throw new InvalidConfigurationException("onceonly.outbox.confirm-timeout", "0", "a positive duration, e.g. 10s");
        }
        if (after.compareTo(confirm) <= 0) {
            // The sweep must not take rows whose fast-path publish may still be waiting for its confirm.
            throw new InvalidConfigurationException("onceonly.outbox.sweep-after", Durations.format(after),
                    "a duration longer than onceonly.outbox.confirm-timeout (" + Durations.format(confirm) + ")");
        }
        return new OutboxSettings(interval, after, config.intValue("onceonly.outbox.batch-size", 100, 1, 10_000),
                config.intValue("onceonly.outbox.max-attempts", 5, 1, 1_000),
                config.duration("onceonly.outbox.retention", Duration.ofDays(1)), confirm);
    }

    /**
     * Reads the settings of guarded Jakarta Messaging listeners.
     *
     * @return the settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public JmsSettings jms() {
        Duration retryDelay = config.duration("onceonly.jms.retry-delay", Duration.ofSeconds(1));
        if (retryDelay.compareTo(Duration.ofMinutes(1)) > 0) {
            // The delivery holds a listener thread and its transaction meanwhile.
            throw new InvalidConfigurationException("onceonly.jms.retry-delay", Durations.format(retryDelay),
                    "at most 1m (the listener thread and its transaction wait meanwhile)");
        }
        return new JmsSettings(config.string("onceonly.jms.dead-letter-queue").orElse(""),
                config.string("onceonly.jms.connection-factory").orElse("java:comp/DefaultJMSConnectionFactory"), retryDelay);
    }

    RedisSettings redis() {
        String urlProp = "onceonly.redis.url";
        String url = config.string(urlProp).orElse("redis://localhost:6379");
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
            throw new InvalidConfigurationException(urlProp, redactUrl(url), expected);
        }
        if (!"redis".equals(uri.getScheme()) && !"rediss".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new InvalidConfigurationException(urlProp, redactUrl(url), expected);
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
        user = config.string("onceonly.redis.user").orElse(user);
        password = config.secret("onceonly.redis.password").orElse(password);
        int database = 0;
        String path = uri.getPath();
        if (path != null && path.length() > 1) {
            try {
                database = Integer.parseInt(path.substring(1));
            } catch (NumberFormatException e) {
                throw new InvalidConfigurationException(urlProp, redactUrl(url), "a database number as path, e.g. redis://host:6379/0");
            }
        }
        RedisSettings.Mode mode = RedisSettings.Mode.valueOf(
                config.choice("onceonly.redis.mode", "standalone", "standalone", "sentinel", "cluster").toUpperCase(Locale.ROOT));
        if (mode == RedisSettings.Mode.CLUSTER && database != 0) {
            throw new InvalidConfigurationException(urlProp, redactUrl(url), "database 0 with onceonly.redis.mode=cluster "
                    + "(Redis Cluster has only database 0)");
        }
        String hostPort = uri.getHost() + ":" + (uri.getPort() < 0 ? 6379 : uri.getPort());
        List<String> nodes = config.string("onceonly.redis.nodes")
                .map(n -> Arrays.stream(n.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList())
                .orElse(List.of(hostPort));
        for (String node : nodes) {
            if (!node.matches("[^:\\s]+:\\d{1,5}")) {
                throw new InvalidConfigurationException("onceonly.redis.nodes", node, "a comma-separated list of host:port");
            }
        }
        String master = config.string("onceonly.redis.sentinel-master").orElse("");
        if (mode == RedisSettings.Mode.SENTINEL && master.isEmpty()) {
            throw new InvalidConfigurationException("onceonly.redis.sentinel-master", "", "the Sentinel master name (required with onceonly.redis.mode=sentinel)");
        }
        Duration connect = config.duration("onceonly.redis.connect-timeout", Duration.ofSeconds(2));
        Duration socket = config.duration("onceonly.redis.socket-timeout", Duration.ofSeconds(2));
        int pool = config.intValue("onceonly.redis.pool-size", 16, 1, 10_000);
        boolean tls = "rediss".equals(uri.getScheme());
        RedisSettings.SentinelAuth sentinels = new RedisSettings.SentinelAuth(config.string("onceonly.redis.sentinel-user").orElse(null),
                config.secret("onceonly.redis.sentinel-password").orElse(null), config.bool("onceonly.redis.sentinel-tls", tls));
        RedisSettings.TlsTrust trust = new RedisSettings.TlsTrust(
                config.string("onceonly.redis.tls.truststore").map(java.nio.file.Path::of).orElse(null),
                config.secret("onceonly.redis.tls.truststore-password").orElse(null),
                config.string("onceonly.redis.tls.truststore-type").orElse("PKCS12"),
                config.bool("onceonly.redis.tls.verify-hostname", true));
        if (trust.truststore() != null && !java.nio.file.Files.isReadable(trust.truststore())) {
            throw new InvalidConfigurationException("onceonly.redis.tls.truststore", trust.truststore().toString(),
                    "a readable trust store file");
        }
        // WAIT needs the count of replicas, not a flag: 0 (off) is the default, negative is refused by the range.
        int waitReplicas = config.intValue("onceonly.redis.wait-replicas", 0, 0, 100);
        Duration waitTimeout = config.duration("onceonly.redis.wait-timeout", RedisSettings.DEFAULT_WAIT_TIMEOUT);
        if (waitReplicas > 0 && waitTimeout.compareTo(socket) >= 0) {
            // A WAIT longer than the read timeout would be cut off by it and reported as Redis down.
            throw new InvalidConfigurationException("onceonly.redis.wait-timeout", waitTimeout.toString(),
                    "a duration below onceonly.redis.socket-timeout (" + socket + ")");
        }
        RedisSettings.NativeClaim nativeClaim = RedisSettings.NativeClaim.valueOf(
                config.choice("onceonly.redis.native-claim", "auto", "auto", "off").toUpperCase(Locale.ROOT));
        return new RedisSettings(mode, nodes, master, tls, user, password, database, connect, socket, pool, sentinels, trust,
                waitReplicas, waitTimeout, nativeClaim);
    }

    /**
     * Resolves the settings of one guarded method.
     *
     * @param method the guarded method
     * @param a its annotation (or its class's)
     * @param keyDeriver validates JSON Pointers with the provider used at runtime
     * @return the consumer's settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public ConsumerSettings consumer(Method method, IdempotentMessage a, KeyDeriver keyDeriver) {
        String consumer = a.consumer().isEmpty()
                ? method.getDeclaringClass().getSimpleName() + "." + method.getName()
                : a.consumer();
        if (!KeyDeriver.CONSUMER_NAME.matcher(consumer).matches()) {
            throw new InvalidConfigurationException("@IdempotentMessage(consumer) on " + method, consumer,
                    "1 to 100 characters of A-Z a-z 0-9 . _ -");
        }
        boolean hasKeyParameter = Arrays.stream(method.getParameters()).anyMatch(p -> p.isAnnotationPresent(IdempotencyKey.class));

        KeyStrategy annotated = a.keyStrategy();
        KeyStrategy strategy = consumerValue(consumer, "key-strategy", annotated == KeyStrategy.DEFAULT ? null : annotated.configName(),
                v -> Arrays.stream(KeyStrategy.values()).filter(k -> k != KeyStrategy.DEFAULT && k.configName().equalsIgnoreCase(v)).findFirst().orElse(null),
                "one of content, message-id, header, json-pointer, parameter")
                .orElse(hasKeyParameter ? KeyStrategy.PARAMETER : KeyStrategy.CONTENT);
        if (strategy == KeyStrategy.PARAMETER && !hasKeyParameter) {
            throw new InvalidConfigurationException(propertyOf(consumer, "key-strategy"), "parameter",
                    "a method with an @IdempotencyKey parameter (" + method + " has none)");
        }
        List<String> keyParts = switch (strategy) {
            case HEADER -> list(consumer, "key-header", a.keyHeader(), null)
                    .orElseThrow(() -> new InvalidConfigurationException(propertyOf(consumer, "key-header"), "",
                            "a header name, or several comma-separated (required with key-strategy=header)"));
            case JSON_POINTER -> list(consumer, "key-pointer", a.keyPointer(), keyDeriver)
                    .orElseThrow(() -> new InvalidConfigurationException(propertyOf(consumer, "key-pointer"), "",
                            "a JSON Pointer such as /orderId, or several comma-separated (required with key-strategy=json-pointer)"));
            default -> List.of();
        };
        boolean fallback = consumerValue(consumer, "missing-key", null,
                v -> v.equalsIgnoreCase("content") ? Boolean.TRUE : v.equalsIgnoreCase("reject") ? Boolean.FALSE : null,
                "reject or content").orElse(false);
        Duration lease = consumerDuration(consumer, "lease", a.lease(), ConsumerSettings.DEFAULT_LEASE);
        if (lease.compareTo(ConsumerSettings.MIN_LEASE) < 0) {
            throw new InvalidConfigurationException(propertyOf(consumer, "lease"), Durations.format(lease),
                    "at least " + Durations.format(ConsumerSettings.MIN_LEASE));
        }
        Duration retention = consumerDuration(consumer, "retention", a.retention(), ConsumerSettings.DEFAULT_RETENTION);
        if (retention.compareTo(lease) < 0) {
            throw new InvalidConfigurationException(propertyOf(consumer, "retention"), Durations.format(retention),
                    "a duration not shorter than the lease (" + Durations.format(lease) + ")");
        }
        boolean ledger = consumerValue(consumer, "ledger", null, ConfigReader::parseBoolean, "true or false").orElse(false);
        StoreFailurePolicy policy = consumerValue(consumer, "store-failure", null,
                v -> v.equalsIgnoreCase("reject") ? StoreFailurePolicy.REJECT : v.equalsIgnoreCase("ledger-only") ? StoreFailurePolicy.LEDGER_ONLY : null,
                "reject or ledger-only").orElse(StoreFailurePolicy.REJECT);
        if (policy == StoreFailurePolicy.LEDGER_ONLY && !ledger) {
            throw new InvalidConfigurationException(propertyOf(consumer, "store-failure"), "ledger-only",
                    "reject, because the ledger is off for this consumer (ledger-only needs ledger=true)");
        }
        // The application's classes, and the JSON APIs it has, are visible from the guarded method's own loader.
        ClassLoader loader = method.getDeclaringClass().getClassLoader();
        RetryRule retryRule = new RetryRule(consumerClasses(consumer, "retry-for", a.retryFor(), loader),
                consumerClasses(consumer, "no-retry-for", a.noRetryFor(), loader), RetryRule.defaultsVisibleTo(loader));
        ConflictPolicy conflict = consumerValue(consumer, "conflict",
                a.conflict() == ConflictPolicy.DEFAULT ? null : a.conflict().configName(),
                v -> Arrays.stream(ConflictPolicy.values()).filter(c -> c != ConflictPolicy.DEFAULT && c.configName().equalsIgnoreCase(v))
                        .findFirst().orElse(null),
                "strict or ignore").orElse(ConflictPolicy.STRICT);
        List<String> conflictFields = conflictFields(consumer, strategy, conflict, a.conflictFields(), keyDeriver);
        return new ConsumerSettings(consumer, strategy, keyParts, fallback, conflict, conflictFields, lease, retention, policy, ledger,
                retryRule);
    }

    /**
     * The consumer's {@code conflict-fields}: none for the content key, whose key already covers the
     * body. Set for the consumer itself (property or annotation) on a content key, they stop the
     * start; the global {@code onceonly.conflict-fields} applies to explicit keys only, so that it
     * can be a default for an application that also has content-key consumers.
     */
    private List<String> conflictFields(String consumer, KeyStrategy strategy, ConflictPolicy conflict, String annotated,
                                        KeyDeriver keyDeriver) {
        Optional<ConfigReader.Entry> entry = consumerEntry(consumer, "conflict-fields", annotated);
        if (entry.isEmpty()) {
            return List.of();
        }
        String property = entry.get().property();
        if (strategy == KeyStrategy.CONTENT) {
            if (property.equals(PREFIX + "conflict-fields")) {
                return List.of();
            }
            throw new InvalidConfigurationException(property, entry.get().value(),
                    "no conflict fields with key-strategy=content: the key is the body's hash, so a copy under it never differs");
        }
        if (conflict == ConflictPolicy.IGNORE) {
            throw new InvalidConfigurationException(property, entry.get().value(), "no conflict fields, because "
                    + propertyOf(consumer, "conflict") + "=ignore compares no bodies at all (set it to strict to compare these fields)");
        }
        return parts(entry.get(), keyDeriver);
    }

    /**
     * A comma-separated list (key parts, conflict fields), from configuration or the annotation.
     *
     * @param pointers validates JSON Pointers; {@code null} for header names
     * @return the parts in the order written, empty when not set
     */
    private Optional<List<String>> list(String consumer, String name, String annotated, KeyDeriver pointers) {
        return consumerEntry(consumer, name, annotated).map(e -> parts(e, pointers));
    }

    /**
     * Splits and checks a list: every part non-empty (trimmed) and written once; JSON Pointers
     * starting with {@code /} and valid RFC 6901. A comma always separates: a header or member name
     * holding a comma cannot be listed.
     */
    private static List<String> parts(ConfigReader.Entry entry, KeyDeriver pointers) {
        String what = pointers == null ? "header names" : "JSON Pointers such as /tenant,/orderId";
        List<String> parts = new ArrayList<>();
        for (String raw : entry.value().split(",", -1)) {
            String part = raw.trim();
            if (part.isEmpty()) {
                throw new InvalidConfigurationException(entry.property(), entry.value(), "comma-separated " + what + " without an empty one");
            }
            if (parts.contains(part)) {
                throw new InvalidConfigurationException(entry.property(), entry.value(),
                        "comma-separated " + what + ", each once ('" + part + "' is listed twice)");
            }
            if (pointers != null) {
                try {
                    if (!part.startsWith("/")) {
                        throw new IllegalArgumentException("not a member pointer");
                    }
                    pointers.validatePointer(part);
                } catch (IllegalArgumentException e) {
                    throw new InvalidConfigurationException(entry.property(), entry.value(),
                            "comma-separated RFC 6901 JSON Pointers, each starting with / ('" + part + "' is not one)");
                }
            }
            parts.add(part);
        }
        return List.copyOf(parts);
    }

    /**
     * A per-consumer list of exception classes: the property's comma-separated class names, resolved
     * with {@code loader} (not initialised), else the annotation's classes. A name that does not load
     * or is not a {@link Throwable} names the property it was written under.
     */
    private List<Class<? extends Throwable>> consumerClasses(String consumer, String name, Class<? extends Throwable>[] annotated,
                                                           ClassLoader loader) {
        Optional<ConfigReader.Entry> raw = consumerProperty(consumer, name);
        if (raw.isEmpty()) {
            return List.of(annotated);
        }
        List<Class<? extends Throwable>> classes = new ArrayList<>();
        for (String className : raw.get().value().split(",")) {
            String trimmed = className.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            Class<?> c;
            try {
                c = Class.forName(trimmed, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                throw new InvalidConfigurationException(raw.get().property(), trimmed,
                        "comma-separated names of exception classes the application can load, e.g. java.lang.IllegalArgumentException");
            }
            if (!Throwable.class.isAssignableFrom(c)) {
                throw new InvalidConfigurationException(raw.get().property(), trimmed,
                        "comma-separated names of exception classes (subclasses of java.lang.Throwable)");
            }
            classes.add(c.asSubclass(Throwable.class));
        }
        return classes;
    }

    /**
     * The property a per-consumer value was read from, for error messages.
     *
     * @param consumer the consumer name
     * @param name the setting, e.g. {@code lease}
     * @return {@code onceonly.consumers.<consumer>.<name>}, or {@code onceonly.<name>} when only that one is set
     */
    public String propertyOf(String consumer, String name) {
        String specific = PREFIX + "consumers." + consumer + "." + name;
        if (config.string(specific).isPresent() || config.string(PREFIX + name).isEmpty()) {
            return specific;
        }
        return PREFIX + name;
    }

    private <T> Optional<T> consumerValue(String consumer, String name, String annotationValue,
                                          Function<String, T> parse, String expected) {
        Optional<ConfigReader.Entry> raw = consumerEntry(consumer, name, annotationValue);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        T value = parse.apply(raw.get().value().trim());
        if (value == null) {
            throw new InvalidConfigurationException(raw.get().property(), raw.get().value(), expected);
        }
        return Optional.of(value);
    }

    /** A per-consumer setting from configuration, else the annotation's value (empty: not set there). */
    private Optional<ConfigReader.Entry> consumerEntry(String consumer, String name, String annotationValue) {
        Optional<ConfigReader.Entry> raw = consumerProperty(consumer, name);
        if (raw.isEmpty() && annotationValue != null && !annotationValue.isEmpty()) {
            return Optional.of(new ConfigReader.Entry("@IdempotentMessage(" + name + ") of consumer " + consumer, annotationValue));
        }
        return raw;
    }

    /** A per-consumer setting from configuration: the consumer's own property, else the global one; trimmed. */
    private Optional<ConfigReader.Entry> consumerProperty(String consumer, String name) {
        String specific = PREFIX + "consumers." + consumer + "." + name;
        Optional<String> raw = config.string(specific);
        if (raw.isPresent()) {
            return Optional.of(new ConfigReader.Entry(specific, raw.get()));
        }
        return config.string(PREFIX + name).map(v -> new ConfigReader.Entry(PREFIX + name, v));
    }

    private Duration consumerDuration(String consumer, String name, String annotationValue, Duration fallback) {
        return consumerValue(consumer, name, annotationValue, Durations::parse, Durations.ACCEPTED).orElse(fallback);
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
