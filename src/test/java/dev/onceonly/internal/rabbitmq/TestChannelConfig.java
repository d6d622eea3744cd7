package dev.onceonly.internal.rabbitmq;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.Map;

/** A {@link ChannelConfig} as the connector builds it, from test properties instead of the server's. */
final class TestChannelConfig {

    private TestChannelConfig() {
    }

    /** {@code channel}: the channel-scoped properties (short keys, with {@code channel-name}); no connector-wide ones. */
    static ChannelConfig of(Map<String, String> channel, ChannelConfig.Direction direction) {
        return of(channel, Map.of(), direction);
    }

    /** {@code global}: the application's configuration, e.g. {@code onceonly.rabbitmq.host}. */
    static ChannelConfig of(Map<String, String> channel, Map<String, String> global, ChannelConfig.Direction direction) {
        return new ChannelConfig(config(new PropertiesConfigSource(channel, "channel", 100)),
                config(new PropertiesConfigSource(global, "global", 100)), direction, BrokerConfig.CredentialsProviders.NONE);
    }

    static ChannelConfig of(Map<String, String> channel, ConfigSource global, ChannelConfig.Direction direction) {
        return of(channel, global, direction, BrokerConfig.CredentialsProviders.NONE);
    }

    /** With the application's credentials providers. */
    static ChannelConfig of(Map<String, String> channel, ConfigSource global, ChannelConfig.Direction direction,
                            BrokerConfig.CredentialsProviders providers) {
        return new ChannelConfig(config(new PropertiesConfigSource(channel, "channel", 100)), config(global), direction, providers);
    }

    private static Config config(ConfigSource source) {
        return new SmallRyeConfigBuilder().withSources(source).build();
    }
}
