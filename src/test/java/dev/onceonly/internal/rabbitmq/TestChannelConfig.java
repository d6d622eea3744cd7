package dev.onceonly.internal.rabbitmq;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.HashMap;
import java.util.Map;

/**
 * A {@link ChannelConfig} as the connector builds it, from test properties instead of the server's.
 * An incoming channel that sets no {@code copy-signing-key} gets {@link #SIGNING_KEY}, as every
 * deployment sets one ({@link #withoutSigningKey} leaves it out).
 */
final class TestChannelConfig {

    /** The copy-signing key of the tests' incoming channels: 32 bytes, the least accepted. */
    static final String SIGNING_KEY = "test-copy-signing-key-0123456789";

    private TestChannelConfig() {
    }

    /** {@code channel}: the channel-scoped properties (short keys, with {@code channel-name}); no connector-wide ones. */
    static ChannelConfig of(Map<String, String> channel, ChannelConfig.Direction direction) {
        return of(channel, Map.of(), direction);
    }

    /** {@code global}: the application's configuration, e.g. {@code onceonly.rabbitmq.host}. */
    static ChannelConfig of(Map<String, String> channel, Map<String, String> global, ChannelConfig.Direction direction) {
        return of(channel, new PropertiesConfigSource(global, "global", 100), direction, BrokerConfig.CredentialsProviders.NONE);
    }

    static ChannelConfig of(Map<String, String> channel, ConfigSource global, ChannelConfig.Direction direction) {
        return of(channel, global, direction, BrokerConfig.CredentialsProviders.NONE);
    }

    /** With the application's credentials providers. */
    static ChannelConfig of(Map<String, String> channel, ConfigSource global, ChannelConfig.Direction direction,
                            BrokerConfig.CredentialsProviders providers) {
        Map<String, String> signed = new HashMap<>(channel);
        if (direction == ChannelConfig.Direction.INCOMING) {
            signed.putIfAbsent("copy-signing-key", SIGNING_KEY);
        }
        return new ChannelConfig(config(new PropertiesConfigSource(signed, "channel", 100)), config(global), direction, providers);
    }

    /** An incoming channel exactly as given, without {@link #SIGNING_KEY}. */
    static ChannelConfig withoutSigningKey(Map<String, String> channel) {
        return new ChannelConfig(config(new PropertiesConfigSource(channel, "channel", 100)),
                config(new PropertiesConfigSource(Map.of(), "global", 100)), ChannelConfig.Direction.INCOMING,
                BrokerConfig.CredentialsProviders.NONE);
    }

    private static Config config(ConfigSource source) {
        return new SmallRyeConfigBuilder().withSources(source).build();
    }
}
