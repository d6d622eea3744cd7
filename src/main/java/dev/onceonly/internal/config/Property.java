package dev.onceonly.internal.config;

import java.util.List;
import java.util.Objects;

/**
 * One configuration property OnceOnly reads: the entry of the catalogue that both the startup
 * validation ({@code ConfigReader} reads nothing else) and {@code docs/configuration.md} come from.
 * Created by the factories below and listed by the {@code PropertySet} of the part that reads it,
 * which also gives it its full name.
 *
 * @param key         what the part's reader looks the value up by (for {@code onceonly.*} the full
 *                    name; per consumer or per channel the last segment, e.g. {@code lease})
 * @param name        the full name as documented, with {@code <consumer>} or {@code <channel>} where
 *                    the part fills one in; equal to {@code key} until a {@code PropertySet} lists it
 * @param type        what kind of value it takes
 * @param fallback    the default as a user would write it, parsed like a written value when the
 *                    property is unset; {@code null} when there is none or it is worked out from other
 *                    values (then the reader is given it, and {@code shown} documents it)
 * @param shown       the default as documented when it is not {@code fallback}, else {@code null}
 * @param min         smallest accepted whole number ({@link Type#INTEGER} only)
 * @param max         largest accepted whole number ({@link Type#INTEGER} only)
 * @param choices     the accepted values, lower case ({@link Type#CHOICE} only)
 * @param alias       the name SmallRye's RabbitMQ connector gives the same setting, read in the same
 *                    scope as {@code key}; {@code null} when none
 * @param description one sentence (or two) saying what it does, Markdown
 */
public record Property(String key, String name, Type type, String fallback, String shown, long min, long max,
                       List<String> choices, String alias, String description) {

    /** The kinds of value a property takes, with how {@code docs/configuration.md} names them. */
    public enum Type {
        /** {@code true} or {@code false}, in any case. */
        BOOLEAN("boolean"),
        /** A whole number in {@code [min, max]}. */
        INTEGER("whole number"),
        /** A decimal number. */
        DECIMAL("number"),
        /** A positive duration: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 24h}, {@code 7d} or ISO-8601. */
        DURATION("duration"),
        /** One of {@code choices}. */
        CHOICE("choice"),
        /** Free text (a name, a URL, a JNDI name), trimmed. */
        TEXT("text"),
        /** Comma-separated values. */
        LIST("comma-separated list"),
        /** A password or key: read as written, never shown in an error or a log line. */
        SECRET("secret");

        private final String label;

        Type(String label) {
            this.label = label;
        }

        /** {@return how the documentation names the type} */
        public String label() {
            return label;
        }
    }

    /**
     * Checks the entry is complete; copies {@code choices}.
     *
     * @param key         what the part's reader looks the value up by
     * @param name        the full name as documented
     * @param type        what kind of value it takes
     * @param fallback    the default as a user would write it, or {@code null}
     * @param shown       the default as documented when it is not {@code fallback}, else {@code null}
     * @param min         smallest accepted whole number
     * @param max         largest accepted whole number
     * @param choices     the accepted values, lower case
     * @param alias       SmallRye's name for the same setting, or {@code null}
     * @param description what it does, Markdown
     */
    public Property {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(description, "description");
        choices = List.copyOf(choices);
    }

    /**
     * A boolean.
     *
     * @param key         the key
     * @param fallback    the default
     * @param description what it does
     * @return the property
     */
    public static Property flag(String key, boolean fallback, String description) {
        return new Property(key, key, Type.BOOLEAN, Boolean.toString(fallback), null, 0, 0, List.of(), null, description);
    }

    /**
     * A whole number from {@code min} to {@code max}.
     *
     * @param key         the key
     * @param fallback    the default
     * @param min         smallest accepted value
     * @param max         largest accepted value
     * @param description what it does
     * @return the property
     */
    public static Property whole(String key, long fallback, long min, long max, String description) {
        return new Property(key, key, Type.INTEGER, Long.toString(fallback), null, min, max, List.of(), null, description);
    }

    /**
     * A whole number from {@code min} to {@code max} that has no default (unset: off).
     *
     * @param key         the key
     * @param min         smallest accepted value
     * @param max         largest accepted value
     * @param description what it does
     * @return the property
     */
    public static Property whole(String key, long min, long max, String description) {
        return new Property(key, key, Type.INTEGER, null, null, min, max, List.of(), null, description);
    }

    /**
     * A duration.
     *
     * @param key         the key
     * @param fallback    the default as written, e.g. {@code 30s}; {@code null} for none
     * @param description what it does
     * @return the property
     */
    public static Property duration(String key, String fallback, String description) {
        return new Property(key, key, Type.DURATION, fallback, null, 0, 0, List.of(), null, description);
    }

    /**
     * One of several values.
     *
     * @param key         the key
     * @param fallback    the default, one of {@code choices}
     * @param description what it does
     * @param choices     the accepted values, lower case
     * @return the property
     */
    public static Property choice(String key, String fallback, String description, String... choices) {
        return new Property(key, key, Type.CHOICE, fallback, null, 0, 0, List.of(choices), null, description);
    }

    /**
     * Text, or (with {@code type}) a list or a number read by the part itself.
     *
     * @param key         the key
     * @param type        {@link Type#TEXT}, {@link Type#LIST}, {@link Type#DECIMAL} or {@link Type#SECRET}
     * @param fallback    the default as written; {@code null} for none
     * @param description what it does
     * @return the property
     */
    public static Property of(String key, Type type, String fallback, String description) {
        return new Property(key, key, type, fallback, null, 0, 0, List.of(), null, description);
    }

    /**
     * This property with its default documented as {@code text}: a default worked out from other
     * values, or one with no written form (the JVM's trust store).
     *
     * @param text the default as documented, Markdown
     * @return the property
     */
    public Property shownAs(String text) {
        return new Property(key, name, type, fallback, text, min, max, choices, alias, description);
    }

    /**
     * This property, also read under SmallRye's name for the same setting.
     *
     * @param smallRye the alias, in the same scope as the key
     * @return the property
     */
    public Property alsoAs(String smallRye) {
        return new Property(key, name, type, fallback, shown, min, max, choices, smallRye, description);
    }

    /** This property under its full name, as a {@code PropertySet} lists it. */
    Property named(String fullName) {
        return new Property(key, fullName, type, fallback, shown, min, max, choices, alias, description);
    }
}
