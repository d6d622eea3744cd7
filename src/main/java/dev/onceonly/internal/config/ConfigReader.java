package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * Typed, validated reads of configuration values: the one place OnceOnly parses a property, and only
 * a {@code Property} of the catalogue (a {@code PropertySet}), so nothing is read that
 * {@code docs/configuration.md} does not list. An unset property takes the catalogue's default
 * ({@code Property#fallback()}), parsed like a written value, unless the call gives one worked out
 * from other values. Every invalid value is an {@link InvalidConfigurationException} naming the full
 * property, the value (never for secrets) and what is accepted; blank values count as unset.
 */
public final class ConfigReader {

    /**
     * Where a reader's values come from: for a property, the value and the full name of the property
     * that gave it (which an error then names). Blank values count as unset.
     */
    @FunctionalInterface
    public interface Source {
        /**
         * Finds a property's value.
         *
         * @param property a property of the reader's part
         * @return the value and where it came from, empty when unset
         */
        Optional<Entry> find(Property property);
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
    private final Function<Property, String> property;

    /**
     * @param source   where values come from
     * @param property the full property name of a property that has no value, for error messages
     */
    public ConfigReader(Source source, Function<Property, String> property) {
        this.source = source;
        this.property = property;
    }

    /**
     * A reader of properties whose keys are their full names ({@code onceonly.*}).
     *
     * @param config where values come from
     * @return the reader
     */
    public static ConfigReader of(Config config) {
        return new ConfigReader(p -> config.getOptionalValue(p.key(), String.class).map(v -> new Entry(p.key(), v)),
                Property::key);
    }

    /**
     * The full property name of {@code p}: the one its value came from, else its own.
     *
     * @param p a property of this reader
     * @return the property's name, for messages
     */
    public String property(Property p) {
        return entry(p).map(Entry::property).orElseGet(() -> property.apply(p));
    }

    /**
     * A value as written, with the property it came from.
     *
     * @param p the property
     * @return the entry, empty when unset or blank
     */
    public Optional<Entry> entry(Property p) {
        return source.find(p).filter(e -> !e.value().isBlank());
    }

    /**
     * A string, without the default.
     *
     * @param p the property
     * @return the trimmed value, empty when unset or blank
     */
    public Optional<String> string(Property p) {
        return entry(p).map(e -> e.value().trim());
    }

    /**
     * A string, else the catalogue's default.
     *
     * @param p the property, with a default
     * @return the trimmed value or the default
     */
    public String text(Property p) {
        return string(p).orElseGet(() -> fallback(p));
    }

    /**
     * A secret as written (not trimmed); it never appears in an error.
     *
     * @param p the property
     * @return the value, empty when unset or empty
     */
    public Optional<String> secret(Property p) {
        return entry(p).map(Entry::value);
    }

    /**
     * A boolean with the catalogue's default.
     *
     * @param p the property
     * @return the value
     * @throws InvalidConfigurationException when it is neither true nor false
     */
    public boolean bool(Property p) {
        return string(p).isPresent() ? bool(p, false) : parseBoolean(fallback(p));
    }

    /**
     * A boolean: {@code true} or {@code false} in any case.
     *
     * @param p the property
     * @param fallback the value when unset or blank, worked out from other values
     * @return the value
     * @throws InvalidConfigurationException when it is neither true nor false
     */
    public boolean bool(Property p, boolean fallback) {
        Optional<String> raw = string(p);
        if (raw.isEmpty()) {
            return fallback;
        }
        Boolean b = parseBoolean(raw.get());
        if (b == null) {
            throw invalid(p, raw.get(), "true or false");
        }
        return b;
    }

    /**
     * One of the property's choices (compared without case), else its default.
     *
     * @param p the property
     * @return the value, lower case
     * @throws InvalidConfigurationException when it is none of the choices
     */
    public String choice(Property p) {
        String v = text(p);
        String lower = v.toLowerCase(Locale.ROOT);
        if (!p.choices().contains(lower)) {
            throw invalid(p, v, "one of " + String.join(", ", p.choices()));
        }
        return lower;
    }

    /**
     * A whole number in the property's range, else its default.
     *
     * @param p the property
     * @return the value
     * @throws InvalidConfigurationException when it is not a whole number in range
     */
    public long number(Property p) {
        return string(p).isPresent() ? number(p, 0, p.min(), p.max()) : Long.parseLong(fallback(p));
    }

    /**
     * A whole number from {@code min} to {@code max}: for a default or bounds worked out from other values.
     *
     * @param p the property
     * @param fallback the value when unset or blank
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @return the value
     * @throws InvalidConfigurationException when it is not a whole number in range
     */
    public long number(Property p, long fallback, long min, long max) {
        Optional<String> raw = string(p);
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
        throw invalid(p, raw.get(), min == 1 && max == Long.MAX_VALUE
                ? "a positive whole number" : "a whole number from " + min + " to " + max);
    }

    /**
     * Like {@link #number(Property)}, within {@code int} range.
     *
     * @param p the property
     * @return the value
     * @throws InvalidConfigurationException when it is not a whole number in range
     */
    public int intValue(Property p) {
        return (int) number(p);
    }

    /**
     * Like {@link #number(Property, long, long, long)}, within {@code int} range.
     *
     * @param p the property
     * @param fallback the value when unset or blank
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @return the value
     * @throws InvalidConfigurationException when it is not a whole number in range
     */
    public int intValue(Property p, int fallback, int min, int max) {
        return (int) number(p, fallback, min, max);
    }

    /**
     * A positive duration, else the catalogue's default.
     *
     * @param p the property
     * @return the value
     * @throws InvalidConfigurationException when it is not a positive duration
     */
    public Duration duration(Property p) {
        return string(p).isPresent() ? duration(p, null) : Durations.parse(fallback(p));
    }

    /**
     * A positive duration ({@link Durations#ACCEPTED}).
     *
     * @param p the property
     * @param fallback the value when unset or blank, worked out from other values
     * @return the value
     * @throws InvalidConfigurationException when it is not a positive duration
     */
    public Duration duration(Property p, Duration fallback) {
        Optional<String> raw = string(p);
        if (raw.isEmpty()) {
            return fallback;
        }
        Duration d = Durations.parse(raw.get());
        if (d == null) {
            throw invalid(p, raw.get(), Durations.ACCEPTED);
        }
        return d;
    }

    /**
     * The error for an invalid value of {@code p}.
     *
     * @param p the property
     * @param value the offending value; {@code null} hides it
     * @param expected what the property accepts
     * @return the exception, naming the full property
     */
    public InvalidConfigurationException invalid(Property p, String value, String expected) {
        return new InvalidConfigurationException(property(p), value, expected);
    }

    /** The catalogue's default; a read without one given is a bug in the part, not the user's error. */
    private static String fallback(Property p) {
        if (p.fallback() == null) {
            throw new IllegalStateException(p.name() + " has no default in the catalogue; the reader must give one");
        }
        return p.fallback();
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
