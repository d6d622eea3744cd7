package dev.onceonly.internal.support;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/** Parses configuration durations: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 24h}, {@code 7d}, or ISO-8601 {@code PT30S}. */
public final class Durations {

    /** What {@link #parse} accepts, for error messages. */
    public static final String ACCEPTED = "a positive duration such as 500ms, 30s, 5m, 24h, 7d or PT30S";

    private Durations() {
    }

    /**
     * Parses a configuration duration.
     *
     * @param text what {@link #ACCEPTED} says, surrounding blanks and case ignored
     * @return the duration, or {@code null} when the text is not a valid positive duration
     */
    public static Duration parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            Duration d;
            if (t.startsWith("pt") || t.startsWith("p")) {
                d = Duration.parse(t.toUpperCase(Locale.ROOT));
            } else if (t.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            } else if (t.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
            } else if (t.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
            } else if (t.endsWith("h")) {
                d = Duration.ofHours(Long.parseLong(t.substring(0, t.length() - 1)));
            } else if (t.endsWith("d")) {
                d = Duration.ofDays(Long.parseLong(t.substring(0, t.length() - 1)));
            } else {
                return null;
            }
            return d.isNegative() || d.isZero() ? null : d;
        } catch (NumberFormatException | DateTimeParseException | ArithmeticException e) {
            return null;
        }
    }

    /**
     * Short human form for logs: {@code 30s}, {@code 250ms}, {@code 24h}.
     *
     * @param d the duration; below a millisecond is left out
     * @return the duration in the largest unit (hours, minutes, seconds or milliseconds) that shows it whole
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
