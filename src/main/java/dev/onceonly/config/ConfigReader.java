package dev.onceonly.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Typed, validated reads of MicroProfile Config values: the one place OnceOnly parses a property.
 * Both the guard's settings ({@link OnceOnlyConfig}) and the connector's channel settings read
 * through it. Every invalid value is an {@link InvalidConfigurationException} naming the full
 * property, the value (never for secrets) and what is accepted; blank values count as unset.
 */
public final class ConfigReader {

    /**
     * Where a reader's values come from: for a key, the value and the full name of the property that
     * gave it (which an error then names). Blank values count as unset.
     */
    @FunctionalInterface
    public interface Source {
        /**
         * Finds a key's value.
         *
         * @param key a key of the reader
         * @return the value and where it came from, empty when unset
         */
        Optional<Entry> find(String key);
    }

    /**
     * A value as written, and the full name of the property it was written under.
     *
     * @param property the full property name
     * @param value    the value as written
     */
    public record Entry(String property, String value) {
    }

    private final Source source;
    private final UnaryOperator<String> property;

    /**
     * @param source   where values come from
     * @param property the full property name of a key that has no value, for error messages
     */
    public ConfigReader(Source source, UnaryOperator<String> property) {
        this.source = source;
        this.property = property;
    }

    /**
     * A reader of full property names.
     *
     * @param config where values come from
     * @return a reader whose keys are the property names
     */
    public static ConfigReader of(Config config) {
        return new ConfigReader(key -> config.getOptionalValue(key, String.class).map(v -> new Entry(key, v)),
                UnaryOperator.identity());
    }

    /**
     * The full property name of {@code key}: the one its value came from, else its own.
     *
     * @param key a key of this reader
     * @return the property's name, for messages
     */
    public String property(String key) {
        return entry(key).map(Entry::property).orElseGet(() -> property.apply(key));
    }

    /**
     * A string.
     *
     * @param key the key
     * @return the trimmed value, empty when unset or blank
     */
    public Optional<String> string(String key) {
        return entry(key).map(e -> e.value().trim());
    }

    /**
     * A secret as written (not trimmed); it never appears in an error.
     *
     * @param key the key
     * @return the value, empty when unset or empty
     */
    public Optional<String> secret(String key) {
        return entry(key).map(Entry::value);
    }

    private Optional<Entry> entry(String key) {
        return source.find(key).filter(e -> !e.value().isBlank());
    }

    /**
     * A boolean: {@code true} or {@code false} in any case.
     *
     * @param key the key
     * @param fallback the value when unset or blank
     * @return the value
     * @throws InvalidConfigurationException when it is neither true nor false
     */
    public boolean bool(String key, boolean fallback) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return fallback;
        }
        Boolean b = parseBoolean(raw.get());
        if (b == null) {
            throw invalid(key, raw.get(), "true or false");
        }
        return b;
    }

    /**
     * One of {@code accepted} (compared without case).
     *
     * @param key the key
     * @param fallback the value when unset or blank
     * @param accepted the accepted values, lower case
     * @return the value, lower case
     * @throws InvalidConfigurationException when it is none of {@code accepted}
     */
    public String choice(String key, String fallback, String... accepted) {
        String v = string(key).orElse(fallback);
        String lower = v.toLowerCase(Locale.ROOT);
        if (!Arrays.asList(accepted).contains(lower)) {
            throw invalid(key, v, "one of " + String.join(", ", accepted));
        }
        return lower;
    }

    /**
     * A whole number from {@code min} to {@code max}.
     *
     * @param key the key
     * @param fallback the value when unset or blank
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @return the value
     * @throws InvalidConfigurationException when it is not a whole number in range
     */
    public long number(String key, long fallback, long min, long max) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return fallback;
        }
        try {
            long v = Long.parseLong(raw.get());
            if (v >= min && v <= max) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw invalid(key, raw.get(), min == 1 && max == Long.MAX_VALUE
                ? "a positive whole number" : "a whole number from " + min + " to " + max);
    }

    /**
     * Like {@link #number}, within {@code int} range.
     *
     * @param key the key
     * @param fallback the value when unset or blank
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @return the value
     * @throws InvalidConfigurationException when it is not a whole number in range
     */
    public int intValue(String key, int fallback, int min, int max) {
        return (int) number(key, fallback, min, max);
    }

    /**
     * A positive duration ({@link Durations#ACCEPTED}).
     *
     * @param key the key
     * @param fallback the value when unset or blank
     * @return the value
     * @throws InvalidConfigurationException when it is not a positive duration
     */
    public Duration duration(String key, Duration fallback) {
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

    /**
     * The error for an invalid value of {@code key}.
     *
     * @param key the key
     * @param value the offending value; {@code null} hides it
     * @param expected what the property accepts
     * @return the exception, naming the full property
     */
    public InvalidConfigurationException invalid(String key, String value, String expected) {
        return new InvalidConfigurationException(property(key), value, expected);
    }

    /**
     * Parses a boolean strictly.
     *
     * @param v the text
     * @return {@code true}/{@code false} for those words in any case, else {@code null}
     */
    public static Boolean parseBoolean(String v) {
        return v.equalsIgnoreCase("true") ? Boolean.TRUE : v.equalsIgnoreCase("false") ? Boolean.FALSE : null;
    }
}
