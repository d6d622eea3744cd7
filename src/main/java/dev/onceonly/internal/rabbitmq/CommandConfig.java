package dev.onceonly.internal.rabbitmq;

import org.eclipse.microprofile.config.Config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the command-line tools ({@code bin/onceonly-topology}, {@code bin/onceonly-dlq}) read of an
 * application: its properties files ({@code --config}, a later one wins), values set on the
 * command line ({@code --set NAME=VALUE}, winning over the files) and the channels asked for
 * ({@code --channel}), and from them the channels of this connector.
 */
final class CommandConfig {

    private static final Pattern CHANNEL = Pattern.compile("mp\\.messaging\\.(incoming|outgoing)\\.([^.]+)\\.connector");

    private final Map<String, String> files = new LinkedHashMap<>();
    private final Map<String, String> set = new LinkedHashMap<>();
    private final List<String> only = new ArrayList<>();

    /**
     * Takes {@code --config FILE}, {@code --set NAME=VALUE} or {@code --channel NAME} at {@code args[i]}.
     *
     * @return the index of the option's value, or -1 when {@code args[i]} is none of them
     * @throws IllegalArgumentException when the value is missing or malformed
     * @throws IOException              when a file cannot be read
     */
    int take(String[] args, int i) throws IOException {
        String a = args[i];
        if (!a.equals("--config") && !a.equals("--set") && !a.equals("--channel")) {
            return -1;
        }
        if (i + 1 == args.length) {
            throw new IllegalArgumentException(a + " needs a value");
        }
        String v = args[i + 1];
        if (a.equals("--config")) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(Path.of(v), StandardCharsets.UTF_8)) {
                p.load(r);
            }
            p.stringPropertyNames().forEach(n -> files.put(n, p.getProperty(n)));
        } else if (a.equals("--channel")) {
            only.add(v);
        } else if (v.indexOf('=') < 1) {
            throw new IllegalArgumentException("--set NAME=VALUE, not " + v);
        } else {
            set.put(v.substring(0, v.indexOf('=')), v.substring(v.indexOf('=') + 1));
        }
        return i + 1;
    }

    /**
     * Ends a tool that failed: why, on standard error, then the exit status.
     *
     * @param tool   the tool's name, which starts the line
     * @param why    what failed; its message is the line (never a password: the configuration's errors leave them out)
     * @param status 2 for a usage error, 1 for the configuration or the broker
     */
    static void exit(String tool, Exception why, int status) {
        System.err.println(tool + ": " + why.getMessage());
        System.exit(status);
    }

    /** {@return the channels asked for with {@code --channel}; empty: every one} */
    List<String> only() {
        return List.copyOf(only);
    }

    /** {@return the application's configuration: the files, then the values set; under system properties and environment variables} */
    Config config() {
        Map<String, String> all = new LinkedHashMap<>(files);
        all.putAll(set);
        return FileConfig.of(all);
    }

    /** One channel of this connector, with its configuration read the way the connector reads it. */
    record Channel(String name, ChannelConfig.Direction direction, ChannelConfig config) {
    }

    /**
     * The channels of this connector in the configuration, those asked for only (each of which must be there).
     *
     * @return sorted by name
     * @throws IllegalArgumentException when there are none, or a channel asked for is not one
     */
    List<Channel> channels(Config config) {
        Map<String, ChannelConfig.Direction> found = new TreeMap<>();
        for (String name : config.getPropertyNames()) {
            Matcher m = CHANNEL.matcher(name);
            if (m.matches() && ChannelProperties.CONNECTOR.equals(config.getOptionalValue(name, String.class).orElse("").trim())) {
                found.put(m.group(2), ChannelConfig.Direction.valueOf(m.group(1).toUpperCase(Locale.ROOT)));
            }
        }
        for (String c : only) {
            if (!found.containsKey(c)) {
                throw new IllegalArgumentException("no channel " + c + " of the connector " + ChannelProperties.CONNECTOR
                        + " in the configuration; found " + found.keySet());
            }
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException("no channel with connector=" + ChannelProperties.CONNECTOR + " in the configuration (--config)");
        }
        List<Channel> channels = new ArrayList<>();
        found.forEach((name, direction) -> {
            if (only.isEmpty() || only.contains(name)) {
                channels.add(new Channel(name, direction, new ChannelConfig(FileConfig.channel(config, direction.prefix(name), name), config,
                        direction, BrokerConfig.CredentialsProviders.NONE)));
            }
        });
        return channels;
    }
}
