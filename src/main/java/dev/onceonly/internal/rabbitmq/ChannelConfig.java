package dev.onceonly.internal.rabbitmq;

import dev.onceonly.internal.config.ConfigReader;
import dev.onceonly.internal.config.Property;
import dev.onceonly.internal.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static dev.onceonly.internal.rabbitmq.ChannelProperties.*;

/**
 * Reads and validates the configuration of one Reactive Messaging channel of this connector
 * ({@link ChannelProperties}), once, when the channel is created (during deployment), through the
 * shared {@link ConfigReader}. Every error is an {@link dev.onceonly.api.InvalidConfigurationException}
 * naming the full property ({@code mp.messaging.incoming.<channel>.<name>}) and what it accepts, so a
 * misconfigured channel stops the application from starting. The password is never part of an error
 * or a log line.
 *
 * <p>Where a value comes from, first match wins:
 * <ol>
 *   <li>the channel-scoped {@link Config} Reactive Messaging hands the connector: a key such as
 *       {@code prefetch} is looked up as {@code mp.messaging.incoming.<channel>.prefetch}, then as
 *       {@code mp.messaging.connector.onceonly-rabbitmq.prefetch}; under this connector's name or under
 *       the name SmallRye's RabbitMQ connector gives the same setting ({@link Property#alias()}), so a
 *       SmallRye configuration works unchanged. Both names with different values stop the start,
 *       naming both;</li>
 *   <li>for the connection's settings only ({@link ChannelProperties#CONNECTION}), the connector-wide
 *       names {@link BrokerConfig} reads for every connection, the outbox relay's too. They are
 *       checked for agreement even where the channel sets the key itself.</li>
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

    private static final Duration DEFAULT_MAX_RETRY_DELAY = Duration.ofMinutes(1);

    private final ConfigReader config;
    private final BrokerConfig.CredentialsProviders credentialsProviders;
    /** The channel as Reactive Messaging names it: {@code orders}, or {@code orders$2} for a concurrency copy. */
    private final String channel;
    /** The channel as configured and as {@code @Incoming} names it. */
    private final String configuredChannel;

    /**
     * @param channelConfig the channel-scoped configuration Reactive Messaging passes the connector
     * @param global        the application's configuration, for the connector-wide names
     * @param credentialsProviders the application's credentials providers, for {@code credentials-provider-name}
     */
    ChannelConfig(Config channelConfig, Config global, Direction direction, BrokerConfig.CredentialsProviders credentialsProviders) {
        this.credentialsProviders = credentialsProviders;
        this.channel = channelConfig.getOptionalValue("channel-name", String.class)
                .orElseThrow(() -> new IllegalStateException("Reactive Messaging passed no channel-name"));
        // Reactive Messaging's own "concurrency" attribute makes copies named <channel>$<n>.
        int copy = channel.indexOf('$');
        this.configuredChannel = copy < 0 ? channel : channel.substring(0, copy);
        String prefix = direction.prefix(configuredChannel);
        BrokerConfig broker = new BrokerConfig(global);
        this.config = new ConfigReader(p -> {
            Optional<ConfigReader.Entry> scoped = BrokerConfig.oneOf(p, channelConfig, prefix, p.key(), p.alias());
            if (!CONNECTION.properties().contains(p)) {
                return scoped;
            }
            // Read even when the channel sets the key: disagreeing connector-wide names stop every channel's start.
            Optional<ConfigReader.Entry> wide = broker.wide(p);
            return scoped.isPresent() ? scoped : wide;
        }, p -> prefix + p.key());
    }

    /**
     * The incoming channel as the connector starts it.
     *
     * @throws dev.onceonly.api.InvalidConfigurationException naming the property, also when
     *         {@code copy-signing-key} is missing or too short
     */
    IncomingSettings incoming() {
        return incoming(CopySignature.key(config, COPY_SIGNING_KEY));
    }

    /**
     * The incoming channel as {@code bin/onceonly-topology} reads it: it declares, lists and
     * deletes, but never signs or verifies anything, so it neither needs nor checks
     * {@code copy-signing-key} (an operator does not have to hand it the application's secret).
     * {@code bin/onceonly-dlq} does need the key: it believes only signed dead letters, and replays
     * one as a signed copy.
     *
     * @return the settings, with no signing key
     */
    IncomingSettings incomingWithoutSigning() {
        return incoming(null);
    }

    private IncomingSettings incoming(String signingKey) {
        String queue = BrokerConfig.name(config, QUEUE_NAME, configuredChannel);
        QueueType queueType = QueueType.valueOf(config.choice(QUEUE_TYPE).toUpperCase(Locale.ROOT));
        String exchange = optionalName(EXCHANGE_NAME, "");
        String exchangeType = config.choice(EXCHANGE_TYPE);
        List<String> routingKeys = Arrays.stream(config.text(ROUTING_KEYS).split(","))
                .map(String::trim).filter(s -> !s.isEmpty()).toList();
        if (routingKeys.isEmpty() || routingKeys.stream().anyMatch(k -> k.length() > 255)) {
            throw config.invalid(ROUTING_KEYS, String.join(",", routingKeys), "a comma-separated list of binding keys, each at most 255 characters");
        }
        int claimAhead = config.intValue(CLAIM_AHEAD);
        IncomingSettings.Batching batch = batching(claimAhead);
        // Batches: room for the next one to gather while one is processed, unless prefetch is set.
        int prefetch = batch != null && config.string(PREFETCH).isEmpty()
                ? Math.max(config.intValue(PREFETCH), 2 * batch.size()) : config.intValue(PREFETCH);
        if (batch != null && batch.size() > prefetch) {
            // The broker sends no more than prefetch unacked deliveries: a bigger batch would only ever fill by lingering.
            throw config.invalid(BATCH_SIZE, Integer.toString(batch.size()), "at most prefetch (" + prefetch + ")");
        }
        String dlx = BrokerConfig.name(config, DEAD_LETTER_EXCHANGE, queue + ".dlx");
        if (dlx.equals(exchange)) {
            // Dead letters would be routed back into the queues they came from, forever.
            throw config.invalid(DEAD_LETTER_EXCHANGE, dlx, "an exchange other than exchange.name");
        }
        String dlxType = config.choice(DEAD_LETTER_EXCHANGE_TYPE);
        String dlq = BrokerConfig.name(config, DEAD_LETTER_QUEUE, queue + ".dlq");
        String dlRoutingKey = BrokerConfig.name(config, DEAD_LETTER_ROUTING_KEY, queue);
        int maxAttempts = config.intValue(MAX_ATTEMPTS);
        RetryBackoff backoff = retryBackoff(queue);
        Duration drainTimeout = config.duration(DRAIN_TIMEOUT);
        Duration confirmTimeout = config.duration(CONFIRM_TIMEOUT);
        // The broker's limit counts only returns the connector did not make; it must not cut retries short.
        int deliveryLimit = config.intValue(DELIVERY_LIMIT, Math.max(20, maxAttempts), maxAttempts, (int) DELIVERY_LIMIT.max());
        PayloadType payload = PayloadType.valueOf(config.choice(PAYLOAD_TYPE).toUpperCase(Locale.ROOT));
        ConnectionSettings connection = BrokerConfig.connection(config, credentialsProviders);
        return new IncomingSettings(channel, connection, queue, queueType, exchange, exchangeType, routingKeys,
                prefetch, dlx, dlxType, dlq, dlRoutingKey, maxAttempts, backoff, drainTimeout,
                confirmTimeout, config.bool(DECLARE), payload, deliveryLimit,
                signingKey, CopySignature.previousKeys(config, COPY_SIGNING_PREVIOUS_KEYS), queueArguments(queueType), claimAhead, batch);
    }

    /** The channel's batches ({@code batch=true}), or {@code null}. */
    private IncomingSettings.Batching batching(int claimAhead) {
        if (!config.bool(BATCH)) {
            return null;
        }
        int size = config.intValue(BATCH_SIZE);
        if (claimAhead > 1) {
            throw config.invalid(CLAIM_AHEAD, Integer.toString(claimAhead),
                    "0 with batch=true: a batch claims the keys of its deliveries in one round trip already");
        }
        Duration linger = config.duration(BATCH_LINGER);
        if (linger.compareTo(Duration.ofSeconds(1)) > 0) {
            throw config.invalid(BATCH_LINGER, config.string(BATCH_LINGER).orElseThrow(), "at most 1s");
        }
        return new IncomingSettings.Batching(size, linger);
    }

    /**
     * The backoff of failed deliveries. By default a FAILED delivery waits about {@code retry-delay}
     * (1 s) after its first attempt, twice that after the second, and so on up to
     * {@code retry-max-delay} (1 min, or {@code retry-delay} when that is longer); delays over
     * {@code retry-broker-delay-above} (5 s) are held by the broker.
     */
    private RetryBackoff retryBackoff(String queue) {
        Duration limit = RetryBackoff.LIMIT;
        Duration first = config.duration(RETRY_DELAY);
        if (first.compareTo(limit) > 0) {
            throw config.invalid(RETRY_DELAY, config.string(RETRY_DELAY).orElseThrow(), "at most " + Durations.format(limit));
        }
        Duration max = config.duration(RETRY_MAX_DELAY, first.compareTo(DEFAULT_MAX_RETRY_DELAY) > 0 ? first : DEFAULT_MAX_RETRY_DELAY);
        if (max.compareTo(first) < 0 || max.compareTo(limit) > 0) {
            throw config.invalid(RETRY_MAX_DELAY, config.string(RETRY_MAX_DELAY).orElseThrow(),
                    "a duration from retry-delay (" + Durations.format(first) + ") to " + Durations.format(limit));
        }
        double multiplier = 2.0;
        Optional<String> rawMultiplier = config.string(RETRY_MULTIPLIER);
        if (rawMultiplier.isPresent()) {
            try {
                multiplier = Double.parseDouble(rawMultiplier.get());
            } catch (NumberFormatException e) {
                multiplier = Double.NaN;
            }
            // Written as a comparison that NaN fails.
            if (!(multiplier >= 1 && multiplier <= 10)) {
                throw config.invalid(RETRY_MULTIPLIER, rawMultiplier.get(), "a number from 1 (a fixed delay) to 10, such as 1.5");
            }
        }
        Duration brokerAbove = config.duration(RETRY_BROKER_DELAY_ABOVE);
        if (brokerAbove.compareTo(Duration.ofSeconds(1)) < 0) {
            // Shorter delays are rounded to whole seconds for the broker, and holding them costs little.
            throw config.invalid(RETRY_BROKER_DELAY_ABOVE, config.string(RETRY_BROKER_DELAY_ABOVE).orElseThrow(), "at least 1s");
        }
        int longestName = DelayQueueNames.name(queue, max).length();
        if (brokerAbove.compareTo(max) < 0 && longestName > 255) {
            throw config.invalid(QUEUE_NAME, queue, "at most " + (255 - (longestName - queue.length()))
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
        boolean singleActive = config.bool(SINGLE_ACTIVE_CONSUMER);
        Duration ttl = config.string(MESSAGE_TTL).isPresent() ? BrokerConfig.millisOrDuration(config, MESSAGE_TTL, null) : null;
        if (ttl != null && ttl.toMillis() > QueueArguments.MAX_TTL_MILLIS) {
            throw config.invalid(MESSAGE_TTL, config.string(MESSAGE_TTL).orElseThrow(),
                    "a positive duration of at most " + QueueArguments.MAX_TTL_MILLIS + " ms (about 49 days)");
        }
        if (ttl != null && ttl.toMillis() == 0) {
            // Durations.parse accepts 500us; the broker counts milliseconds, and 0 expires everything not delivered at once.
            throw config.invalid(MESSAGE_TTL, config.string(MESSAGE_TTL).orElseThrow(), "at least 1ms");
        }
        int maxLength = config.intValue(MAX_LENGTH, 0, (int) MAX_LENGTH.min(), (int) MAX_LENGTH.max());
        String overflow = null;
        if (config.string(OVERFLOW).isPresent()) {
            overflow = config.choice(OVERFLOW);
            if (maxLength == 0) {
                throw config.invalid(OVERFLOW, overflow, "to be set together with queue.max-length, the limit it applies to");
            }
            if (queueType == QueueType.QUORUM && overflow.equals("reject-publish-dlx")) {
                throw config.invalid(OVERFLOW, overflow,
                        "drop-head or reject-publish: quorum queues do not support reject-publish-dlx");
            }
        }
        return new QueueArguments(singleActive, ttl, maxLength, overflow);
    }

    OutgoingSettings outgoing() {
        String exchange = optionalName(EXCHANGE_NAME, "");
        String exchangeType = config.choice(EXCHANGE_TYPE);
        String routingKey = config.string(ROUTING_KEY).orElse(configuredChannel);
        if (routingKey.length() > 255) {
            throw config.invalid(ROUTING_KEY, routingKey, "at most 255 characters");
        }
        return new OutgoingSettings(channel, BrokerConfig.connection(config, credentialsProviders), exchange, exchangeType, routingKey,
                config.bool(PERSISTENT), config.bool(DECLARE), config.bool(MANDATORY),
                config.intValue(MAX_INFLIGHT),
                config.duration(CONFIRM_TIMEOUT), config.duration(DRAIN_TIMEOUT));
    }

    /** Like {@link BrokerConfig#name}, but empty (the default exchange) is allowed. */
    private String optionalName(Property p, String fallback) {
        String v = config.string(p).orElse(fallback);
        return v.isEmpty() ? v : BrokerConfig.name(config, p, v);
    }
}
