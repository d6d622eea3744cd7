package dev.onceonly.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;

import java.time.Duration;
import java.util.Objects;

/**
 * Resolved, validated and immutable settings of one consumer. Built once at startup by the
 * configuration layer (which names the property in any error); the engine trusts them.
 *
 * @param consumer            consumer name, {@code [A-Za-z0-9._-]+}; scopes the keys
 * @param keyStrategy         never {@link KeyStrategy#DEFAULT} here
 * @param keyHeader           header name for {@link KeyStrategy#HEADER}, else empty
 * @param keyPointer          JSON Pointer for {@link KeyStrategy#JSON_POINTER}, else empty
 * @param fallbackToContent   when the message-id / header / pointer / parameter is missing: use the content key instead of REJECTED
 * @param lease               claim lease while the handler runs; renewed every lease/3
 * @param retention           how long a processed key is remembered in the claim store
 * @param storeFailure        what to do when the claim store is unreachable
 * @param ledger              whether the transactional ledger guards this consumer too
 * @param retryRule           which failures of the handler are worth retrying
 */
public record ConsumerSettings(String consumer, KeyStrategy keyStrategy, String keyHeader, String keyPointer,
                               boolean fallbackToContent, Duration lease, Duration retention,
                               StoreFailurePolicy storeFailure, boolean ledger, RetryRule retryRule) {

    /** Built-in default lease: used when neither annotation nor configuration sets one. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);
    /** Built-in default retention: used when neither annotation nor configuration sets one. */
    public static final Duration DEFAULT_RETENTION = Duration.ofHours(24);
    /** Shortest lease accepted: renewals every lease/3 must stay meaningful against store latency. */
    public static final Duration MIN_LEASE = Duration.ofMillis(30);

    /**
     * Checks the settings; {@code null} header and pointer become empty.
     *
     * @param consumer          consumer name, {@code [A-Za-z0-9._-]+}
     * @param keyStrategy       how the key is derived; not {@link KeyStrategy#DEFAULT}
     * @param keyHeader         header name for {@link KeyStrategy#HEADER}, or {@code null}
     * @param keyPointer        JSON Pointer for {@link KeyStrategy#JSON_POINTER}, or {@code null}
     * @param fallbackToContent use the content key when the explicit key is missing
     * @param lease             claim lease while the handler runs
     * @param retention         how long a processed key is remembered
     * @param storeFailure      what to do when the claim store is unreachable
     * @param ledger            whether the ledger guards this consumer too
     * @param retryRule         which failures of the handler are worth retrying
     * @throws NullPointerException when a required setting is {@code null}
     * @throws IllegalArgumentException when the key strategy is still {@link KeyStrategy#DEFAULT}
     */
    public ConsumerSettings {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(keyStrategy, "keyStrategy");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(retention, "retention");
        Objects.requireNonNull(storeFailure, "storeFailure");
        Objects.requireNonNull(retryRule, "retryRule");
        keyHeader = keyHeader == null ? "" : keyHeader;
        keyPointer = keyPointer == null ? "" : keyPointer;
        if (keyStrategy == KeyStrategy.DEFAULT) {
            throw new IllegalArgumentException("keyStrategy must be resolved before building settings");
        }
    }

    /** {@return the key strategy in one line, for the startup log} */
    public String describeKey() {
        return switch (keyStrategy) {
            case HEADER -> "header(" + keyHeader + ")";
            case JSON_POINTER -> "json-pointer(" + keyPointer + ")";
            default -> keyStrategy.configName();
        } + (fallbackToContent ? "|content" : "");
    }
}
