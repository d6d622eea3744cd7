package dev.onceonly.internal.result;

import java.time.Duration;
import java.util.Objects;

/**
 * How one consumer keeps the results of its calls, resolved and validated at startup by the
 * configuration layer (which names the property in any error).
 *
 * @param maxBytes  the largest result stored, in bytes of its JSON (UTF-8); a larger one is not stored
 * @param retention how long a stored result is given to duplicates
 */
public record ResultSettings(int maxBytes, Duration retention) {

    /** Default {@code result.max-size}: 64 KiB of JSON. */
    public static final int DEFAULT_MAX_BYTES = 64 * 1024;
    /** Largest {@code result.max-size} accepted: 16 MiB, what MariaDB's {@code MEDIUMTEXT} column holds. */
    public static final int MAX_MAX_BYTES = 16 * 1024 * 1024;

    /**
     * Checks the settings.
     *
     * @param maxBytes  from 1 to {@link #MAX_MAX_BYTES}
     * @param retention positive
     */
    public ResultSettings {
        if (maxBytes < 1 || maxBytes > MAX_MAX_BYTES) {
            throw new IllegalArgumentException("maxBytes out of range: " + maxBytes);
        }
        Objects.requireNonNull(retention, "retention");
        if (retention.isZero() || retention.isNegative()) {
            throw new IllegalArgumentException("retention must be positive");
        }
    }
}
