package dev.onceonly.rabbitmq;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads and validates the configuration of one Reactive Messaging channel of this connector, once,
 * when the channel is created (during deployment). Every error is an
 * {@link InvalidConfigurationException} naming the full property
 * ({@code mp.messaging.incoming.<channel>.<name>}) and what it accepts, so a misconfigured channel
 * stops the application from starting. The password is never part of an error or a log line.
 *
 * <p>Reactive Messaging hands the connector a channel-scoped {@link Config}: a key such as
 * {@code host} is looked up as {@code mp.messaging.incoming.<channel>.host}, then as
 * {@code mp.messaging.connector.onceonly-rabbitmq.host}.
 */
final class ChannelConfig {

    /** Which side of the connector a channel is on; names the property prefix. */
    enum Direction {
        INCOMING, OUTGOING;

        String prefix(String channel) {
            return "mp.messaging." + name().toLowerCase(Locale.ROOT) + "." + channel + ".";
        }
    }

    private static final String NAME = "[A-Za-z0-9._:-]{1,255}";
    private static final List<String> EXCHANGE_TYPES = List.of("direct", "fanout", "topic", "headers");

    private final Config config;
    /** The channel as Reactive Messaging names it: {@code orders}, or {@code orders$2} for a concurrency copy. */
    private final String channel;
    /** The channel as configured and as {@code @Incoming} names it. */
    private final String configuredChannel;
    private final Direction direction;

    ChannelConfig(Config config, Direction direction) {
        this.config = config;
        this.direction = direction;
        this.channel = config.getOptionalValue("channel-name", String.class)
                .orElseThrow(() -> new IllegalStateException("Reactive Messaging passed no channel-name"));
        // Reactive Messaging's own "concurrency" attribute makes copies named <channel>$<n>.
        int copy = channel.indexOf('$');
        this.configuredChannel = copy < 0 ? channel : channel.substring(0, copy);
    }

    IncomingSettings incoming() {
        String queue = name("queue.name", configuredChannel);
        QueueType queueType = QueueType.valueOf(choice("queue.type", "classic", "classic", "quorum").toUpperCase(Locale.ROOT));
        String exchange = optionalName("exchange.name", "");
        String exchangeType = choice("exchange.type", "topic", EXCHANGE_TYPES.toArray(String[]::new));
        List<String> routingKeys = string("routing-keys")
                .map(v -> Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList())
                .orElse(List.of("#"));
        if (routingKeys.isEmpty() || routingKeys.stream().anyMatch(k -> k.length() > 255)) {
            throw invalid("routing-keys", String.join(",", routingKeys), "a comma-separated list of binding keys, each at most 255 characters");
        }
        int prefetch = intValue("prefetch", 16, 1, 65_535);
        String dlx = name("dead-letter.exchange", queue + ".dlx");
        String dlxType = choice("dead-letter.exchange.type", "fanout", EXCHANGE_TYPES.toArray(String[]::new));
        String dlq = name("dead-letter.queue", queue + ".dlq");
        String dlRoutingKey = name("dead-letter.routing-key", queue);
        int maxAttempts = intValue("max-attempts", 5, 1, 1_000);
        Duration retryDelay = duration("retry-delay", Duration.ofSeconds(1));
        Duration drainTimeout = duration("drain-timeout", Duration.ofSeconds(10));
        Duration confirmTimeout = duration("confirm-timeout", Duration.ofSeconds(10));
        PayloadType payload = PayloadType.valueOf(choice("payload-type", "string", "string", "bytes").toUpperCase(Locale.ROOT));
        return new IncomingSettings(channel, connection(), queue, queueType, exchange, exchangeType, routingKeys,
                prefetch, dlx, dlxType, dlq, dlRoutingKey, maxAttempts, retryDelay, drainTimeout,
                confirmTimeout, bool("declare", true), payload);
    }

    OutgoingSettings outgoing() {
        String exchange = optionalName("exchange.name", "");
        String exchangeType = choice("exchange.type", "topic", EXCHANGE_TYPES.toArray(String[]::new));
        String routingKey = string("routing-key").orElse(configuredChannel);
        if (routingKey.length() > 255) {
            throw invalid("routing-key", routingKey, "at most 255 characters");
        }
        return new OutgoingSettings(channel, connection(), exchange, exchangeType, routingKey,
                bool("persistent", true), bool("declare", true), intValue("max-inflight", 256, 1, 65_535),
                duration("confirm-timeout", Duration.ofSeconds(10)), duration("drain-timeout", Duration.ofSeconds(10)));
    }

    private ConnectionSettings connection() {
        String host = string("host").orElse("localhost");
        boolean tls = bool("tls", false);
        int port = intValue("port", tls ? 5671 : 5672, 1, 65_535);
        String vhost = string("virtual-host").orElse("/");
        String user = string("username").orElse("guest");
        // Read the password raw: an error about it must never echo it.
        String password = config.getOptionalValue("password", String.class).orElse("guest");
        boolean verifyHost = bool("tls.verify-hostname", true);
        Duration recovery = duration("network-recovery-interval", Duration.ofSeconds(5));
        return new ConnectionSettings(host, port, vhost, user, password, tls, verifyHost, recovery);
    }

    private InvalidConfigurationException invalid(String key, String value, String expected) {
        return new InvalidConfigurationException(direction.prefix(configuredChannel) + key, value, expected);
    }

    private Optional<String> string(String key) {
        return config.getOptionalValue(key, String.class).map(String::trim).filter(s -> !s.isEmpty());
    }

    private String name(String key, String fallback) {
        String v = string(key).orElse(fallback);
        if (!v.matches(NAME)) {
            throw invalid(key, v, "a name of 1 to 255 characters of A-Z a-z 0-9 . _ : -");
        }
        return v;
    }

    /** Like {@link #name}, but empty (the default exchange) is allowed. */
    private String optionalName(String key, String fallback) {
        String v = string(key).orElse(fallback);
        return v.isEmpty() ? v : name(key, v);
    }

    private String choice(String key, String fallback, String... accepted) {
        String v = string(key).orElse(fallback).toLowerCase(Locale.ROOT);
        if (!Arrays.asList(accepted).contains(v)) {
            throw invalid(key, v, "one of " + String.join(", ", accepted));
        }
        return v;
    }

    private int intValue(String key, int fallback, int min, int max) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return fallback;
        }
        try {
            int v = Integer.parseInt(raw.get());
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw invalid(key, raw.get(), "a whole number from " + min + " to " + max);
    }

    private boolean bool(String key, boolean fallback) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return fallback;
        }
        if (raw.get().equalsIgnoreCase("true") || raw.get().equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(raw.get());
        }
        throw invalid(key, raw.get(), "true or false");
    }

    private Duration duration(String key, Duration fallback) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return fallback;
        }
        Duration d = Durations.parse(raw.get());
        if (d == null) {
            throw invalid(key, raw.get(), Durations.ACCEPTED);
        }
        return d;
    }
}
