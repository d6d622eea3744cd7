package dev.onceonly.api;

/**
 * A configuration value is missing or invalid. Raised at application start, so a misconfigured
 * application does not start. The message names the property, the offending value (unless it is a
 * secret) and what is accepted.
 */
public class InvalidConfigurationException extends OnceOnlyException {

    /** The property that is missing or invalid. */
    private final String property;
    /** What the property accepts. */
    private final String expected;

    /**
     * An invalid or missing value.
     *
     * @param property the property's name
     * @param value the offending value, or {@code null} to leave it out of the message (a secret)
     * @param expected what the property accepts, e.g. {@code "a duration such as 10s"}
     */
    public InvalidConfigurationException(String property, String value, String expected) {
        super("Invalid value " + (value == null ? "(hidden)" : "'" + value + "'") + " for property '" + property
                + "': expected " + expected);
        this.property = property;
        this.expected = expected;
    }

    /** {@return the name of the property that is missing or invalid} */
    public String property() {
        return property;
    }

    /** {@return what the property accepts} */
    public String expected() {
        return expected;
    }
}
