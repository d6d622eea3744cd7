package dev.onceonly.rabbitmq;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.impl.CredentialsProvider;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.config.ConfigReader;
import dev.onceonly.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads and validates the configuration of one Reactive Messaging channel of this connector, once,
 * when the channel is created (during deployment), through the shared {@link ConfigReader}. Every error is an
 * {@link InvalidConfigurationException} naming the full property
 * ({@code mp.messaging.incoming.<channel>.<name>}) and what it accepts, so a misconfigured channel
 * stops the application from starting. The password is never part of an error or a log line.
 *
 * <p>Where a value comes from, first match wins:
 * <ol>
 *   <li>the channel-scoped {@link Config} Reactive Messaging hands the connector: a key such as
 *       {@code host} is looked up as {@code mp.messaging.incoming.<channel>.host}, then as
 *       {@code mp.messaging.connector.onceonly-rabbitmq.host}; under this connector's name or under
 *       the name SmallRye's RabbitMQ connector gives the same setting ({@link #SMALLRYE_NAMES}), so a
 *       SmallRye configuration works unchanged. Both names with different values stop the start,
 *       naming both;</li>
 *   <li>for the connection's settings only ({@link #CONNECTION_KEYS}), the connector-wide
 *       {@code onceonly.rabbitmq.<key>}, or SmallRye's {@code rabbitmq-<key>}: plain names that
 *       environment variables can set ({@code ONCEONLY_RABBITMQ_HOST}), which channel properties
 *       cannot (Reactive Messaging finds channels by property names, and no environment variable
 *       maps back to {@code mp.messaging.incoming.orders.host}).</li>
 * </ol>
 */
final class ChannelConfig {

    /** Which side of the connector a channel is on; names the property prefix. */
    enum Direction {
        INCOMING, OUTGOING;

        String prefix(String channel) {
            return "mp.messaging." + name().toLowerCase(Locale.ROOT) + "." + channel + ".";
        }
    }

    /** Connector-wide prefix of the connection's settings, settable from the environment. */
    static final String GLOBAL_PREFIX = "onceonly.rabbitmq.";

    /** The connection's settings: the only ones with a connector-wide, environment-settable name. */
    static final Set<String> CONNECTION_KEYS = Set.of("addresses", "host", "port", "username", "password", "virtual-host", "tls",
            "tls.verify-hostname", "network-recovery-interval", "connection-timeout", "instance-id", "credentials-provider-name");

    /**
     * The application's {@code CredentialsProvider} beans by name ({@code @Named}), for
     * {@code credentials-provider-name}.
     */
    @FunctionalInterface
    interface CredentialsProviders {
        /** No provider at all. */
        CredentialsProviders NONE = name -> Optional.empty();

        Optional<CredentialsProvider> named(String name);
    }

    /** This connector's key → the name SmallRye's RabbitMQ connector gives the same setting, per direction. */
    static final Map<Direction, Map<String, String>> SMALLRYE_NAMES = Map.of(
            Direction.INCOMING, Map.of("prefetch", "max-outstanding-messages", "queue.type", "queue.x-queue-type",
                    "queue.delivery-limit", "queue.x-delivery-limit", "queue.message-ttl", "queue.ttl", "dead-letter.exchange", "dead-letter-exchange",
                    "dead-letter.exchange.type", "dead-letter-exchange-type", "dead-letter.queue", "dead-letter-queue-name",
                    "dead-letter.routing-key", "dead-letter-routing-key", "tls", "ssl", "username", "user"),
            Direction.OUTGOING, Map.of("routing-key", "default-routing-key", "max-inflight", "max-inflight-messages",
                    "tls", "ssl", "username", "user"));

    /** This connector's key → SmallRye's connector-wide alias of it. */
    static final Map<String, String> SMALLRYE_GLOBAL_NAMES = Map.of("addresses", "rabbitmq-addresses", "host", "rabbitmq-host",
            "port", "rabbitmq-port", "username", "rabbitmq-username", "password", "rabbitmq-password",
            "virtual-host", "rabbitmq-virtual-host", "tls", "rabbitmq-ssl");

    private static final String NAME = "[A-Za-z0-9._:-]{1,255}";
    private static final Duration DEFAULT_MAX_RETRY_DELAY = Duration.ofMinutes(1);
    private static final List<String> EXCHANGE_TYPES = List.of("direct", "fanout", "topic", "headers");

    private final ConfigReader config;
    private final CredentialsProviders credentialsProviders;
    /** The channel as Reactive Messaging names it: {@code orders}, or {@code orders$2} for a concurrency copy. */
    private final String channel;
    /** The channel as configured and as {@code @Incoming} names it. */
    private final String configuredChannel;

    /**
     * @param channelConfig the channel-scoped configuration Reactive Messaging passes the connector
     * @param global        the application's configuration, for the connector-wide names
     * @param credentialsProviders the application's credentials providers, for {@code credentials-provider-name}
     */
    ChannelConfig(Config channelConfig, Config global, Direction direction, CredentialsProviders credentialsProviders) {
        this.credentialsProviders = credentialsProviders;
        this.channel = channelConfig.getOptionalValue("channel-name", String.class)
                .orElseThrow(() -> new IllegalStateException("Reactive Messaging passed no channel-name"));
        // Reactive Messaging's own "concurrency" attribute makes copies named <channel>$<n>.
        int copy = channel.indexOf('$');
        this.configuredChannel = copy < 0 ? channel : channel.substring(0, copy);
        String prefix = direction.prefix(configuredChannel);
        Map<String, String> smallRye = SMALLRYE_NAMES.get(direction);
        this.config = new ConfigReader(key -> {
            Optional<ConfigReader.Entry> scoped = oneOf(key, channelConfig, prefix, key, smallRye.get(key));
            if (scoped.isPresent() || !CONNECTION_KEYS.contains(key)) {
                return scoped;
            }
            return oneOf(key, global, "", GLOBAL_PREFIX + key, SMALLRYE_GLOBAL_NAMES.get(key));
        }, key -> prefix + key);
    }

    private ChannelConfig(String channel, ConfigReader config, CredentialsProviders credentialsProviders) {
        this.channel = channel;
        this.configuredChannel = channel;
        this.config = config;
        this.credentialsProviders = credentialsProviders;
    }

    /**
     * The connection settings of a connection that belongs to no channel (the outbox relay's):
     * only the connector-wide {@code onceonly.rabbitmq.*} (or SmallRye's {@code rabbitmq-*}) names.
     *
     * @param global the application's configuration
     * @param credentialsProviders the application's credentials providers
     * @return the settings, validated; errors name the {@code onceonly.rabbitmq.*} property
     */
    static ConnectionSettings connectorWide(Config global, CredentialsProviders credentialsProviders) {
        return new ChannelConfig("outbox", new ConfigReader(
                key -> oneOf(key, global, "", GLOBAL_PREFIX + key, SMALLRYE_GLOBAL_NAMES.get(key)),
                key -> GLOBAL_PREFIX + key), credentialsProviders).connection();
    }

    /**
     * The value of {@code name} or of its {@code alias} in {@code config}; both set to different
     * values is an error naming both (without the value, for the password).
     */
    private static Optional<ConfigReader.Entry> oneOf(String key, Config config, String prefix, String name, String alias) {
        Optional<ConfigReader.Entry> own = value(config, prefix, name);
        Optional<ConfigReader.Entry> other = alias == null ? Optional.empty() : value(config, prefix, alias);
        if (own.isPresent() && other.isPresent() && !own.get().value().trim().equals(other.get().value().trim())) {
            throw new InvalidConfigurationException(own.get().property(), key.equals("password") ? null : own.get().value(),
                    "the same value as " + other.get().property() + ", which names the same setting; set only one of them");
        }
        return own.isPresent() ? own : other;
    }

    private static Optional<ConfigReader.Entry> value(Config config, String prefix, String name) {
        return config.getOptionalValue(name, String.class).filter(v -> !v.isBlank())
                .map(v -> new ConfigReader.Entry(prefix + name, v));
    }

    IncomingSettings incoming() {
        String queue = name("queue.name", configuredChannel);
        QueueType queueType = QueueType.valueOf(config.choice("queue.type", "classic", "classic", "quorum").toUpperCase(Locale.ROOT));
        String exchange = optionalName("exchange.name", "");
        String exchangeType = config.choice("exchange.type", "topic", EXCHANGE_TYPES.toArray(String[]::new));
        List<String> routingKeys = config.string("routing-keys")
                .map(v -> Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList())
                .orElse(List.of("#"));
        if (routingKeys.isEmpty() || routingKeys.stream().anyMatch(k -> k.length() > 255)) {
            throw config.invalid("routing-keys", String.join(",", routingKeys), "a comma-separated list of binding keys, each at most 255 characters");
        }
        int prefetch = config.intValue("prefetch", 16, 1, 65_535);
        int claimAhead = config.intValue("claim-ahead", 0, 0, 1_024);
        String dlx = name("dead-letter.exchange", queue + ".dlx");
        if (dlx.equals(exchange)) {
            // Dead letters would be routed back into the queues they came from, forever.
            throw config.invalid("dead-letter.exchange", dlx, "an exchange other than exchange.name");
        }
        String dlxType = config.choice("dead-letter.exchange.type", "fanout", EXCHANGE_TYPES.toArray(String[]::new));
        String dlq = name("dead-letter.queue", queue + ".dlq");
        String dlRoutingKey = name("dead-letter.routing-key", queue);
        int maxAttempts = config.intValue("max-attempts", 5, 1, 1_000);
        RetryBackoff backoff = retryBackoff(queue);
        Duration drainTimeout = config.duration("drain-timeout", Duration.ofSeconds(10));
        Duration confirmTimeout = config.duration("confirm-timeout", Duration.ofSeconds(10));
        // The broker's limit counts only returns the connector did not make; it must not cut retries short.
        int deliveryLimit = config.intValue("queue.delivery-limit", Math.max(20, maxAttempts), maxAttempts, 1_000_000);
        PayloadType payload = PayloadType.valueOf(config.choice("payload-type", "string", "string", "bytes").toUpperCase(Locale.ROOT));
        ConnectionSettings connection = connection();
        String signingKey = config.secret("copy-signing-key").orElse(null);
        if (signingKey == null && connection.credentials() != null) {
            // The default key is derived from the password, which a provider may rotate: copies signed
            // before a rotation would be taken for forgeries after it.
            throw config.invalid("copy-signing-key", null, "a key of its own, the same on every instance, with credentials-provider-name");
        }
        return new IncomingSettings(channel, connection, queue, queueType, exchange, exchangeType, routingKeys,
                prefetch, dlx, dlxType, dlq, dlRoutingKey, maxAttempts, backoff, drainTimeout,
                confirmTimeout, config.bool("declare", true), payload, deliveryLimit,
                signingKey, CopySignature.previousKeys(config), queueArguments(queueType), claimAhead);
    }

    /**
     * The backoff of failed deliveries. By default a FAILED delivery waits about {@code retry-delay}
     * (1 s) after its first attempt, twice that after the second, and so on up to
     * {@code retry-max-delay} (1 min, or {@code retry-delay} when that is longer); delays over
     * {@code retry-broker-delay-above} (5 s) are held by the broker.
     */
    private RetryBackoff retryBackoff(String queue) {
        Duration limit = RetryBackoff.LIMIT;
        Duration first = config.duration("retry-delay", Duration.ofSeconds(1));
        if (first.compareTo(limit) > 0) {
            throw config.invalid("retry-delay", config.string("retry-delay").orElseThrow(), "at most " + Durations.format(limit));
        }
        Duration max = config.duration("retry-max-delay", first.compareTo(DEFAULT_MAX_RETRY_DELAY) > 0 ? first : DEFAULT_MAX_RETRY_DELAY);
        if (max.compareTo(first) < 0 || max.compareTo(limit) > 0) {
            throw config.invalid("retry-max-delay", config.string("retry-max-delay").orElseThrow(),
                    "a duration from retry-delay (" + Durations.format(first) + ") to " + Durations.format(limit));
        }
        double multiplier = 2.0;
        Optional<String> rawMultiplier = config.string("retry-multiplier");
        if (rawMultiplier.isPresent()) {
            try {
                multiplier = Double.parseDouble(rawMultiplier.get());
            } catch (NumberFormatException e) {
                multiplier = Double.NaN;
            }
            // Written as a comparison that NaN fails.
            if (!(multiplier >= 1 && multiplier <= 10)) {
                throw config.invalid("retry-multiplier", rawMultiplier.get(), "a number from 1 (a fixed delay) to 10, such as 1.5");
            }
        }
        Duration brokerAbove = config.duration("retry-broker-delay-above", Duration.ofSeconds(5));
        if (brokerAbove.compareTo(Duration.ofSeconds(1)) < 0) {
            // Shorter delays are rounded to whole seconds for the broker, and holding them costs little.
            throw config.invalid("retry-broker-delay-above", config.string("retry-broker-delay-above").orElseThrow(), "at least 1s");
        }
        int longestName = DelayQueueNames.name(queue, max).length();
        if (brokerAbove.compareTo(max) < 0 && longestName > 255) {
            throw config.invalid("queue.name", queue, "at most " + (255 - (longestName - queue.length()))
                    + " characters: retries longer than retry-broker-delay-above wait in queues named <queue>"
                    + DelayQueueNames.INFIX + "<ms>, and RabbitMQ names have at most 255");
        }
        return new RetryBackoff(first, max, multiplier, brokerAbove);
    }

    /**
     * The optional queue arguments. Checked here, not left to the broker: a value it refuses would
     * fail every declaration (a channel error, retried forever) instead of stopping the start.
     */
    private QueueArguments queueArguments(QueueType queueType) {
        boolean singleActive = config.bool("queue.single-active-consumer", false);
        Duration ttl = config.string("queue.message-ttl").isPresent() ? millisOrDuration("queue.message-ttl", null) : null;
        if (ttl != null && ttl.toMillis() > QueueArguments.MAX_TTL_MILLIS) {
            throw config.invalid("queue.message-ttl", config.string("queue.message-ttl").orElseThrow(),
                    "a positive duration of at most " + QueueArguments.MAX_TTL_MILLIS + " ms (about 49 days)");
        }
        if (ttl != null && ttl.toMillis() == 0) {
            // Durations.parse accepts 500us; the broker counts milliseconds, and 0 expires everything not delivered at once.
            throw config.invalid("queue.message-ttl", config.string("queue.message-ttl").orElseThrow(), "at least 1ms");
        }
        int maxLength = config.intValue("queue.max-length", 0, 1, Integer.MAX_VALUE);
        String overflow = null;
        if (config.string("queue.overflow").isPresent()) {
            overflow = config.choice("queue.overflow", "drop-head", QueueArguments.OVERFLOWS);
            if (maxLength == 0) {
                throw config.invalid("queue.overflow", overflow, "to be set together with queue.max-length, the limit it applies to");
            }
            if (queueType == QueueType.QUORUM && overflow.equals("reject-publish-dlx")) {
                throw config.invalid("queue.overflow", overflow,
                        "drop-head or reject-publish: quorum queues do not support reject-publish-dlx");
            }
        }
        return new QueueArguments(singleActive, ttl, maxLength, overflow);
    }

    OutgoingSettings outgoing() {
        String exchange = optionalName("exchange.name", "");
        String exchangeType = config.choice("exchange.type", "topic", EXCHANGE_TYPES.toArray(String[]::new));
        String routingKey = config.string("routing-key").orElse(configuredChannel);
        if (routingKey.length() > 255) {
            throw config.invalid("routing-key", routingKey, "at most 255 characters");
        }
        return new OutgoingSettings(channel, connection(), exchange, exchangeType, routingKey,
                config.bool("persistent", true), config.bool("declare", true), config.bool("mandatory", true),
                config.intValue("max-inflight", 256, 1, 65_535),
                config.duration("confirm-timeout", Duration.ofSeconds(10)), config.duration("drain-timeout", Duration.ofSeconds(10)));
    }

    private ConnectionSettings connection() {
        boolean tls = config.bool("tls", false);
        int defaultPort = tls ? 5671 : 5672;
        // As in SmallRye's connector: addresses, when given, replace host and port.
        List<Address> addresses = config.string("addresses").map(a -> addresses(a, defaultPort))
                .orElseGet(() -> List.of(new Address(config.string("host").orElse("localhost"),
                        config.intValue("port", defaultPort, 1, 65_535))));
        String vhost = config.string("virtual-host").orElse("/");
        Optional<String> givenUser = config.string("username");
        // Read the password raw: an error about it must never echo it.
        Optional<String> givenPassword = config.secret("password");
        ConnectionSettings.NamedCredentials credentials = null;
        Optional<String> providerName = config.string("credentials-provider-name");
        if (providerName.isPresent()) {
            String name = providerName.get();
            if (givenUser.isPresent() || givenPassword.isPresent()) {
                throw config.invalid("credentials-provider-name", name, "no username and password beside it (the provider gives them)");
            }
            credentials = new ConnectionSettings.NamedCredentials(name, credentialsProviders.named(name).orElseThrow(
                    () -> config.invalid("credentials-provider-name", name,
                            "the @Named name of a CDI bean of type com.rabbitmq.client.impl.CredentialsProvider")));
        }
        String user = givenUser.orElse("guest");
        String password = givenPassword.orElse("guest");
        boolean verifyHost = config.bool("tls.verify-hostname", true);
        Duration recovery = millisOrDuration("network-recovery-interval", Duration.ofSeconds(5));
        Duration connectTimeout = millisOrDuration("connection-timeout", Duration.ofSeconds(10));
        String instance = name("instance-id", defaultInstanceId());
        return new ConnectionSettings(addresses, vhost, user, password, tls, verifyHost, recovery, connectTimeout, instance, credentials);
    }

    /** {@code host[:port],...} (IPv6 hosts in brackets); a node without a port gets {@code defaultPort}. */
    private List<Address> addresses(String value, int defaultPort) {
        String expected = "a comma-separated list of host[:port] (IPv6 hosts in brackets), such as mq1:5672,mq2:5672";
        List<Address> parsed;
        try {
            parsed = Arrays.stream(Address.parseAddresses(value))
                    .map(a -> new Address(a.getHost(), a.getPort() < 0 ? defaultPort : a.getPort())).toList();
        } catch (RuntimeException e) {
            throw config.invalid("addresses", value, expected);
        }
        if (parsed.isEmpty() || parsed.stream().anyMatch(a -> a.getHost().isBlank() || a.getPort() < 1 || a.getPort() > 65_535)) {
            throw config.invalid("addresses", value, expected);
        }
        return parsed;
    }

    /**
     * {@code <host>-<pid>}: tells the connections of several instances apart on the broker. The host
     * from {@code HOSTNAME} (set in containers, where it is the pod or container name), else the
     * local host name; characters outside the name alphabet become '-'.
     */
    private static String defaultInstanceId() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                host = "host";
            }
        }
        String id = host.replaceAll("[^A-Za-z0-9._:-]", "-") + "-" + ProcessHandle.current().pid();
        return id.length() <= 255 ? id : id.substring(id.length() - 255);
    }

    /** A duration, or a bare whole number of milliseconds (the unit SmallRye's connector uses under the same name). */
    private Duration millisOrDuration(String key, Duration fallback) {
        Optional<String> raw = config.string(key);
        if (raw.isPresent() && raw.get().chars().allMatch(Character::isDigit)) {
            return Duration.ofMillis(config.number(key, 0, 1, Integer.MAX_VALUE));
        }
        return config.duration(key, fallback);
    }

    private String name(String key, String fallback) {
        String v = config.string(key).orElse(fallback);
        if (!v.matches(NAME)) {
            throw config.invalid(key, v, "a name of 1 to 255 characters of A-Z a-z 0-9 . _ : -");
        }
        return v;
    }

    /** Like {@link #name}, but empty (the default exchange) is allowed. */
    private String optionalName(String key, String fallback) {
        String v = config.string(key).orElse(fallback);
        return v.isEmpty() ? v : name(key, v);
    }
}
