package dev.onceonly.api;

/**
 * A configuration value is missing or invalid. Raised at application start, so a misconfigured
 * application does not start. The message names the property, the offending value (unless it is a
 * secret) and what is accepted.
 */
public class InvalidConfigurationException extends OnceOnlyException {

    private final String property;
    private final String expected;

    public InvalidConfigurationException(String property, String value, String expected) {
        super("Invalid value " + (value == null ? "(hidden)" : "'" + value + "'") + " for property '" + property
                + "': expected " + expected);
        this.property = property;
        this.expected = expected;
    }

    public String property() {
        return property;
    }

    public String expected() {
        return expected;
    }
}
