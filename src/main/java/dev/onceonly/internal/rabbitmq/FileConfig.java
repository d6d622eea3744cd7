package dev.onceonly.internal.rabbitmq;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigValue;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.eclipse.microprofile.config.spi.Converter;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An application's MicroProfile Config outside its server, for {@code bin/onceonly-topology}: the
 * properties given (a {@code microprofile-config.properties} file and {@code --set} values), below
 * system properties and environment variables as MicroProfile Config ranks them (an environment
 * variable is found by the property's name with every character other than a letter or digit made
 * {@code _}, as is or upper case), with {@code ${name}} and {@code ${name:default}} expressions
 * expanded. String values only: the connector's settings are read as strings and parsed by
 * {@link dev.onceonly.internal.config.ConfigReader}.
 */
class FileConfig implements Config {

    private static final Pattern EXPRESSION = Pattern.compile("\\$\\{([^}:]+)(?::([^}]*))?}");

    private final Map<String, String> properties;
    private final UnaryOperator<String> environment;

    /** @param environment the environment variable of a name, or {@code null} ({@code System::getenv}) */
    FileConfig(Map<String, String> properties, UnaryOperator<String> environment) {
        this.properties = Map.copyOf(properties);
        this.environment = environment == null ? System::getenv : environment;
    }

    /** The raw value of {@code name}, expressions not expanded. */
    private Optional<String> raw(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            String env = name.replaceAll("[^A-Za-z0-9]", "_");
            v = firstNonNull(environment.apply(name), environment.apply(env), environment.apply(env.toUpperCase(Locale.ROOT)));
        }
        return Optional.ofNullable(v != null ? v : properties.get(name));
    }

    private static String firstNonNull(String... values) {
        for (String v : values) {
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    private String expand(String name, String value, int depth) {
        if (depth > 20) {
            throw new IllegalArgumentException("the expressions of " + name + " refer to each other without end");
        }
        Matcher m = EXPRESSION.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String ref = m.group(1);
            String found = raw(ref).map(v -> expand(ref, v, depth + 1)).orElse(m.group(2));
            if (found == null) {
                throw new NoSuchElementException(name + " refers to " + ref + ", which is not set: set it with --set " + ref + "=...");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(found));
        }
        m.appendTail(out);
        return out.toString();
    }

    @Override
    public <T> Optional<T> getOptionalValue(String name, Class<T> type) {
        if (type != String.class) {
            throw new IllegalArgumentException("only String values: " + name);
        }
        return raw(name).map(v -> type.cast(expand(name, v, 0)));
    }

    @Override
    public <T> T getValue(String name, Class<T> type) {
        return getOptionalValue(name, type).orElseThrow(() -> new NoSuchElementException(name + " is not set"));
    }

    @Override
    public ConfigValue getConfigValue(String name) {
        Optional<String> v = getOptionalValue(name, String.class);
        return new ConfigValue() {
            @Override
            public String getName() {
                return name;
            }

            @Override
            public String getValue() {
                return v.orElse(null);
            }

            @Override
            public String getRawValue() {
                return raw(name).orElse(null);
            }

            @Override
            public String getSourceName() {
                return "onceonly-topology";
            }

            @Override
            public int getSourceOrdinal() {
                return 100;
            }
        };
    }

    /** The names of the properties given; those only in the environment are looked up, never listed. */
    @Override
    public Iterable<String> getPropertyNames() {
        Set<String> names = new TreeSet<>(properties.keySet());
        return List.copyOf(names);
    }

    @Override
    public Iterable<ConfigSource> getConfigSources() {
        return List.of();
    }

    @Override
    public <T> Optional<Converter<T>> getConverter(Class<T> forType) {
        return Optional.empty();
    }

    @Override
    public <T> T unwrap(Class<T> type) {
        throw new IllegalArgumentException("nothing to unwrap");
    }

    /**
     * One channel's view, as Reactive Messaging hands it to the connector: {@code key} is
     * {@code <prefix>key} ({@code mp.messaging.<direction>.<channel>.key}), else the connector-wide
     * {@code mp.messaging.connector.onceonly-rabbitmq.key}; {@code channel-name} is the channel.
     */
    Config channel(String prefix, String channel) {
        FileConfig global = this;
        return new FileConfig(Map.of(), environment) {
            @Override
            public <T> Optional<T> getOptionalValue(String key, Class<T> type) {
                if (key.equals("channel-name")) {
                    return Optional.of(type.cast(channel));
                }
                Optional<T> own = global.getOptionalValue(prefix + key, type);
                return own.isPresent() ? own : global.getOptionalValue(ChannelProperties.CONNECTOR_PREFIX + key, type);
            }
        };
    }
}
