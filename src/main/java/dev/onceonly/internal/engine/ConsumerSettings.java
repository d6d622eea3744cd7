package dev.onceonly.internal.engine;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Resolved, validated and immutable settings of one consumer. Built once at startup by the
 * configuration layer (which names the property in any error); the engine trusts them.
 *
 * @param consumer            consumer name, {@code [A-Za-z0-9._-]+}; scopes the keys
 * @param keyStrategy         never {@link KeyStrategy#DEFAULT} here
 * @param keyParts            the header names for {@link KeyStrategy#HEADER}, the JSON Pointers for
 *                            {@link KeyStrategy#JSON_POINTER} (one, or several for a composite key, in
 *                            key order), else empty
 * @param fallbackToContent   when the message-id / header / pointer / parameter is missing: use the content key instead of REJECTED
 * @param conflict            whether a different body under a key processed before is a CONFLICT
 *                            ({@link ConflictPolicy#STRICT}) or a DUPLICATE ({@link ConflictPolicy#IGNORE});
 *                            never {@link ConflictPolicy#DEFAULT} here
 * @param conflictFields      JSON Pointers whose values are compared instead of the whole body; empty:
 *                            the whole body. Only with {@link ConflictPolicy#STRICT}
 * @param lease               claim lease while the handler runs; renewed every lease/3
 * @param retention           how long a processed key is remembered in the claim store
 * @param storeFailure        what to do when the claim store is unreachable
 * @param ledger              whether the transactional ledger guards this consumer too
 * @param retryRule           which failures of the handler are worth retrying
 */
public record ConsumerSettings(String consumer, KeyStrategy keyStrategy, List<String> keyParts, boolean fallbackToContent,
                               ConflictPolicy conflict, List<String> conflictFields, Duration lease, Duration retention,
                               StoreFailurePolicy storeFailure, boolean ledger, RetryRule retryRule) {

    /** Built-in default lease: used when neither annotation nor configuration sets one. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);
    /** Built-in default retention: used when neither annotation nor configuration sets one. */
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);
    /** Shortest lease accepted: renewals every lease/3 must stay meaningful against store latency. */
    public static final Duration MIN_LEASE = Duration.ofMillis(30);

    /**
     * Checks the settings and copies the lists.
     *
     * @param consumer          consumer name, {@code [A-Za-z0-9._-]+}
     * @param keyStrategy       how the key is derived; not {@link KeyStrategy#DEFAULT}
     * @param keyParts          header names or JSON Pointers of the key, see above
     * @param fallbackToContent use the content key when the explicit key is missing
     * @param conflict          {@link ConflictPolicy#STRICT} or {@link ConflictPolicy#IGNORE}
     * @param conflictFields    JSON Pointers compared instead of the whole body, or empty
     * @param lease             claim lease while the handler runs
     * @param retention         how long a processed key is remembered
     * @param storeFailure      what to do when the claim store is unreachable
     * @param ledger            whether the ledger guards this consumer too
     * @param retryRule         which failures of the handler are worth retrying
     * @throws NullPointerException when a setting is {@code null}
     * @throws IllegalArgumentException when the key strategy or the conflict policy is still
     *         {@code DEFAULT}, the strategy needs key parts and has none, or conflict fields come
     *         with {@link ConflictPolicy#IGNORE}
     */
    public ConsumerSettings {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(keyStrategy, "keyStrategy");
        keyParts = List.copyOf(keyParts);
        Objects.requireNonNull(conflict, "conflict");
        conflictFields = List.copyOf(conflictFields);
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(retention, "retention");
        Objects.requireNonNull(storeFailure, "storeFailure");
        Objects.requireNonNull(retryRule, "retryRule");
        if (keyStrategy == KeyStrategy.DEFAULT || conflict == ConflictPolicy.DEFAULT) {
            throw new IllegalArgumentException("keyStrategy and conflict must be resolved before building settings");
        }
        if ((keyStrategy == KeyStrategy.HEADER || keyStrategy == KeyStrategy.JSON_POINTER) && keyParts.isEmpty()) {
            throw new IllegalArgumentException("key strategy " + keyStrategy.configName() + " needs at least one key part");
        }
        if (conflict == ConflictPolicy.IGNORE && !conflictFields.isEmpty()) {
            throw new IllegalArgumentException("conflict fields are compared only with conflict=strict");
        }
    }

    /** {@return the key strategy and conflict policy in one line, for the startup log} */
    public String describeKey() {
        String key = switch (keyStrategy) {
            case HEADER, JSON_POINTER -> keyStrategy.configName() + "(" + String.join(",", keyParts) + ")";
            default -> keyStrategy.configName();
        } + (fallbackToContent ? "|content" : "");
        if (conflict == ConflictPolicy.IGNORE) {
            return key + ", conflict=ignore";
        }
        return conflictFields.isEmpty() ? key : key + ", conflict-fields=" + String.join(",", conflictFields);
    }
}
