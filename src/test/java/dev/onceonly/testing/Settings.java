package dev.onceonly.testing;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.RetryRule;

import java.time.Duration;
import java.util.List;

/**
 * {@link ConsumerSettings} for tests, built only through the record's canonical constructor (in
 * {@link #of}), so a change of the record is one change here.
 */
public final class Settings {

    private Settings() {
    }

    /**
     * The built-in defaults (the engine's lease and retention, {@code REJECT}, no ledger, strict
     * conflicts, no retry lists but the default no-retry-for classes this class path has) with
     * {@code strategy}, one that needs no key parts (see {@link #withKey}).
     */
    public static ConsumerSettings defaults(String consumer, KeyStrategy strategy) {
        return of(consumer, strategy, List.of(), false, ConflictPolicy.STRICT, List.of(), ConsumerSettings.DEFAULT_LEASE,
                ConsumerSettings.DEFAULT_RETENTION, StoreFailurePolicy.REJECT, false,
                new RetryRule(List.of(), List.of(), RetryRule.defaultsVisibleTo(Settings.class.getClassLoader())));
    }

    public static ConsumerSettings withLedger(ConsumerSettings s, boolean ledger) {
        return of(s.consumer(), s.keyStrategy(), s.keyParts(), s.fallbackToContent(), s.conflict(), s.conflictFields(), s.lease(),
                s.retention(), s.storeFailure(), ledger, s.retryRule());
    }

    public static ConsumerSettings withStoreFailure(ConsumerSettings s, StoreFailurePolicy policy) {
        return of(s.consumer(), s.keyStrategy(), s.keyParts(), s.fallbackToContent(), s.conflict(), s.conflictFields(), s.lease(),
                s.retention(), policy, s.ledger(), s.retryRule());
    }

    public static ConsumerSettings withLease(ConsumerSettings s, Duration lease) {
        return of(s.consumer(), s.keyStrategy(), s.keyParts(), s.fallbackToContent(), s.conflict(), s.conflictFields(), lease,
                s.retention(), s.storeFailure(), s.ledger(), s.retryRule());
    }

    /** {@code s} with processed keys remembered in the claim store for {@code retention}. */
    public static ConsumerSettings withRetention(ConsumerSettings s, Duration retention) {
        return of(s.consumer(), s.keyStrategy(), s.keyParts(), s.fallbackToContent(), s.conflict(), s.conflictFields(),
                s.lease(), retention, s.storeFailure(), s.ledger(), s.retryRule());
    }

    /** {@code s} keyed by {@code strategy} on these header names or JSON Pointers (none for the other strategies). */
    public static ConsumerSettings withKey(ConsumerSettings s, KeyStrategy strategy, boolean fallback, String... parts) {
        return of(s.consumer(), strategy, List.of(parts), fallback, s.conflict(), s.conflictFields(), s.lease(), s.retention(),
                s.storeFailure(), s.ledger(), s.retryRule());
    }

    /** {@code s} with this conflict policy, comparing the values at {@code fields} (none: the whole body). */
    public static ConsumerSettings withConflict(ConsumerSettings s, ConflictPolicy conflict, String... fields) {
        return of(s.consumer(), s.keyStrategy(), s.keyParts(), s.fallbackToContent(), conflict, List.of(fields), s.lease(),
                s.retention(), s.storeFailure(), s.ledger(), s.retryRule());
    }

    /** {@code s} with these retry-for and no-retry-for classes (the defaults kept). */
    public static ConsumerSettings withRetry(ConsumerSettings s, List<Class<? extends Throwable>> retryFor,
                                             List<Class<? extends Throwable>> noRetryFor) {
        return of(s.consumer(), s.keyStrategy(), s.keyParts(), s.fallbackToContent(), s.conflict(), s.conflictFields(), s.lease(),
                s.retention(), s.storeFailure(), s.ledger(), new RetryRule(retryFor, noRetryFor, s.retryRule().defaults()));
    }

    private static ConsumerSettings of(String consumer, KeyStrategy strategy, List<String> parts, boolean fallback,
                                       ConflictPolicy conflict, List<String> conflictFields, Duration lease, Duration retention,
                                       StoreFailurePolicy storeFailure, boolean ledger, RetryRule retryRule) {
        return new ConsumerSettings(consumer, strategy, parts, fallback, conflict, conflictFields, lease, retention, storeFailure,
                ledger, retryRule);
    }
}
