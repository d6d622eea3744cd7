package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.impl.CredentialsProvider;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.config.ConfigReader;
import dev.onceonly.internal.config.Property;
import org.eclipse.microprofile.config.Config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static dev.onceonly.internal.rabbitmq.ChannelProperties.*;

/**
 * Reads and validates the broker connection's settings ({@link ChannelProperties#CONNECTION}), the
 * same way for every connection the connector opens: a channel's, and the outbox relay's, which
 * belongs to no channel. The connector-wide value of a key comes from {@code onceonly.rabbitmq.<key>}
 * (or SmallRye's {@code rabbitmq-<key>}) and from {@code mp.messaging.connector.onceonly-rabbitmq.<key>};
 * when both are set and differ, the start fails naming both. The password is never part of an error.
 */
final class BrokerConfig {

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

    private static final String NAME = "[A-Za-z0-9._:-]{1,255}";

    private final Config global;

    /** @param global the application's configuration, where the connector-wide names are */
    BrokerConfig(Config global) {
        this.global = global;
    }

    /**
     * The connection settings of a connection that belongs to no channel (the outbox relay's): the
     * connector-wide names only.
     *
     * @param global the application's configuration
     * @param credentialsProviders the application's credentials providers
     * @return the settings, validated; errors name the property the value came from
     */
    static ConnectionSettings connectorWide(Config global, CredentialsProviders credentialsProviders) {
        BrokerConfig broker = new BrokerConfig(global);
        return connection(new ConfigReader(broker::wide, p -> WIDE_PREFIX + p.key()), credentialsProviders);
    }

    /**
     * The connector-wide value of a connection property, whichever of its names gave it.
     *
     * @param p a property of {@link ChannelProperties#CONNECTION}
     * @return the value, empty when none of its connector-wide names is set
     * @throws InvalidConfigurationException when two of them are set to different values, naming both
     */
    Optional<ConfigReader.Entry> wide(Property p) {
        String smallRye = SMALLRYE_WIDE_NAMES.get(p.key());
        Optional<ConfigReader.Entry> own = oneOf(p, global, "", WIDE_PREFIX + p.key(), smallRye);
        Optional<ConfigReader.Entry> connector = oneOf(p, global, "", CONNECTOR_PREFIX + p.key(),
                p.alias() == null ? null : CONNECTOR_PREFIX + p.alias());
        return agreeing(p, own, connector);
    }

    /**
     * The value of {@code name} or of its {@code alias} in {@code config}; both set to different
     * values is an error naming both (without the value, for a secret).
     *
     * @param prefix what makes {@code name} a full property name in errors ({@code config} may be channel-scoped)
     */
    static Optional<ConfigReader.Entry> oneOf(Property p, Config config, String prefix, String name, String alias) {
        return agreeing(p, value(config, prefix, name), alias == null ? Optional.empty() : value(config, prefix, alias));
    }

    /** The one of two names of the same setting that is set; both set to different values is an error naming both. */
    private static Optional<ConfigReader.Entry> agreeing(Property p, Optional<ConfigReader.Entry> own,
                                                         Optional<ConfigReader.Entry> other) {
        if (own.isPresent() && other.isPresent() && !own.get().value().trim().equals(other.get().value().trim())) {
            throw new InvalidConfigurationException(own.get().property(), p.type() == Property.Type.SECRET ? null : own.get().value(),
                    "the same value as " + other.get().property() + ", which names the same setting; set only one of them");
        }
        return own.isPresent() ? own : other;
    }

    private static Optional<ConfigReader.Entry> value(Config config, String prefix, String name) {
        return config.getOptionalValue(name, String.class).filter(v -> !v.isBlank())
                .map(v -> new ConfigReader.Entry(prefix + name, v));
    }

    /**
     * Reads the connection's settings.
     *
     * @param config a reader of the connection's properties, resolving them for the channel (or for none)
     * @param credentialsProviders the application's credentials providers
     * @return the settings, validated
     */
    static ConnectionSettings connection(ConfigReader config, CredentialsProviders credentialsProviders) {
        boolean tls = config.bool(TLS);
        int defaultPort = tls ? 5671 : 5672;
        // As in SmallRye's connector: addresses, when given, replace host and port.
        List<Address> addresses = config.string(ADDRESSES).map(a -> addresses(config, a, defaultPort))
                .orElseGet(() -> List.of(new Address(config.text(HOST), config.intValue(PORT, defaultPort, 1, 65_535))));
        String vhost = config.text(VIRTUAL_HOST);
        Optional<String> givenUser = config.string(USERNAME);
        // Read the password raw: an error about it must never echo it.
        Optional<String> givenPassword = config.secret(PASSWORD);
        ConnectionSettings.NamedCredentials credentials = null;
        Optional<String> providerName = config.string(CREDENTIALS_PROVIDER);
        if (providerName.isPresent()) {
            String name = providerName.get();
            if (givenUser.isPresent() || givenPassword.isPresent()) {
                throw config.invalid(CREDENTIALS_PROVIDER, name, "no username and password beside it (the provider gives them)");
            }
            credentials = new ConnectionSettings.NamedCredentials(name, credentialsProviders.named(name).orElseThrow(
                    () -> config.invalid(CREDENTIALS_PROVIDER, name,
                            "the @Named name of a CDI bean of type com.rabbitmq.client.impl.CredentialsProvider")));
        }
        String user = givenUser.orElseGet(() -> config.text(USERNAME));
        String password = givenPassword.orElseGet(() -> config.text(PASSWORD));
        boolean verifyHost = config.bool(VERIFY_HOSTNAME);
        Duration recovery = millisOrDuration(config, RECOVERY_INTERVAL, null);
        Duration connectTimeout = millisOrDuration(config, CONNECTION_TIMEOUT, null);
        String instance = name(config, INSTANCE_ID, defaultInstanceId());
        return new ConnectionSettings(addresses, vhost, user, password, tls, verifyHost, recovery, connectTimeout, instance, credentials);
    }

    /** {@code host[:port],...} (IPv6 hosts in brackets); a node without a port gets {@code defaultPort}. */
    private static List<Address> addresses(ConfigReader config, String value, int defaultPort) {
        String expected = "a comma-separated list of host[:port] (IPv6 hosts in brackets), such as mq1:5672,mq2:5672";
        List<Address> parsed;
        try {
            parsed = Arrays.stream(Address.parseAddresses(value))
                    .map(a -> new Address(a.getHost(), a.getPort() < 0 ? defaultPort : a.getPort())).toList();
        } catch (RuntimeException e) {
            throw config.invalid(ADDRESSES, value, expected);
        }
        if (parsed.isEmpty() || parsed.stream().anyMatch(a -> a.getHost().isBlank() || a.getPort() < 1 || a.getPort() > 65_535)) {
            throw config.invalid(ADDRESSES, value, expected);
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

    /**
     * A duration, or a bare whole number of milliseconds (the unit SmallRye's connector uses under the same name).
     *
     * @param fallback the value when unset, or {@code null} for the catalogue's default
     */
    static Duration millisOrDuration(ConfigReader config, Property p, Duration fallback) {
        Optional<String> raw = config.string(p);
        if (raw.isPresent() && raw.get().chars().allMatch(Character::isDigit)) {
            return Duration.ofMillis(config.number(p, 0, 1, Integer.MAX_VALUE));
        }
        return fallback == null ? config.duration(p) : config.duration(p, fallback);
    }

    /** A RabbitMQ name (exchange, queue, routing key, instance id): 1 to 255 characters of a safe alphabet. */
    static String name(ConfigReader config, Property p, String fallback) {
        String v = config.string(p).orElse(fallback);
        if (!v.matches(NAME)) {
            throw config.invalid(p, v, "a name of 1 to 255 characters of A-Z a-z 0-9 . _ : -");
        }
        return v;
    }
}
