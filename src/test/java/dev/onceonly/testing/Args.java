package dev.onceonly.testing;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code --name value} command-line options of the load and chaos tools. */
public final class Args {

    private final Map<String, String> values;

    private Args(Map<String, String> values) {
        this.values = values;
    }

    /** @param names the options the tool knows, for the error message */
    public static Args parse(String[] args, String names) {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 == args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + args[i] + " (options: " + names + ")");
            }
            values.put(args[i].substring(2), args[++i]);
        }
        return new Args(values);
    }

    public String get(String name) {
        return values.get(name);
    }

    public String get(String name, String defaultValue) {
        return values.getOrDefault(name, defaultValue);
    }

    public Map<String, String> all() {
        return values;
    }

    public int integer(String name, int defaultValue) {
        String v = values.get(name);
        try {
            return v == null ? defaultValue : Integer.parseInt(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a whole number, got '" + v + "'");
        }
    }

    /** Seconds, or a number with {@code s}, {@code m}. */
    public Duration duration(String name, Duration defaultValue) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            if (v.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            }
            if (v.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            }
            return Duration.ofSeconds(Long.parseLong(v.endsWith("s") ? v.substring(0, v.length() - 1) : v));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a duration such as 90s or 5m, got '" + v + "'");
        }
    }
}
