package dev.onceonly.internal.rabbitmq;

import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.Map;
import java.util.Set;

/**
 * An application's MicroProfile Config outside its server, for {@code bin/onceonly-topology}: SmallRye
 * Config, the implementation Liberty's {@code mpConfig} runs, over the properties given (a
 * {@code microprofile-config.properties} file and {@code --set} values, ordinal 100), below system
 * properties (400) and environment variables (300, found by the property's name with every character
 * other than a letter or digit made {@code _}, as is or upper case), with {@code ${name}} and
 * {@code ${name:default}} expressions expanded and {@code %profile.} properties applied for the
 * profile {@code mp.config.profile} names. So the command reads the values the server would.
 *
 * <p>SmallRye Config is a dependency of this command only: the library's POM lists it as optional,
 * so it never reaches an application's {@code WEB-INF/lib}, where a second MicroProfile Config
 * implementation beside Liberty's would be found by {@code ConfigProviderResolver}'s service lookup.
 */
final class FileConfig {

    private FileConfig() {
    }

    /**
     * {@return the configuration of {@code properties}, under system properties and environment variables}
     *
     * @param properties the application's properties, as written (expressions not expanded)
     */
    static Config of(Map<String, String> properties) {
        return new SmallRyeConfigBuilder().addDefaultInterceptors().addSystemSources()
                .withSources(new PropertiesConfigSource(properties, "onceonly-topology", 100)).build();
    }

    /**
     * One channel's view, as Reactive Messaging hands it to the connector: {@code key} is
     * {@code <prefix>key} ({@code mp.messaging.<direction>.<channel>.key}) of {@code global}, else the
     * connector-wide {@code mp.messaging.connector.onceonly-rabbitmq.key}; {@code channel-name} is the
     * channel. Values come expanded from {@code global}, and are not expanded again.
     *
     * @param global  the application's configuration ({@link #of})
     * @param prefix  the channel's property prefix
     * @param channel the channel's name
     * @return the channel's configuration
     */
    static Config channel(Config global, String prefix, String channel) {
        ConfigSource scoped = new ConfigSource() {
            @Override
            public Set<String> getPropertyNames() {
                return Set.of("channel-name");
            }

            @Override
            public String getValue(String key) {
                if (key.equals("channel-name")) {
                    return channel;
                }
                return global.getOptionalValue(prefix + key, String.class)
                        .or(() -> global.getOptionalValue(ChannelProperties.CONNECTOR_PREFIX + key, String.class)).orElse(null);
            }

            @Override
            public String getName() {
                return "onceonly-topology channel " + channel;
            }
        };
        return new SmallRyeConfigBuilder().withSources(scoped).build();
    }
}
