package dev.onceonly.testing;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.engine.ConsumerSettings;

import java.time.Duration;

/**
 * {@link ConsumerSettings} for tests, built only through the record's canonical constructor (in
 * {@link #of}), so a change of the record is one change here.
 */
public final class Settings {

    private Settings() {
    }

    /** The built-in defaults (the engine's lease and retention, {@code REJECT}, no ledger) with {@code strategy}. */
    public static ConsumerSettings defaults(String consumer, KeyStrategy strategy) {
        return of(consumer, strategy, "", "", false, ConsumerSettings.DEFAULT_LEASE, ConsumerSettings.DEFAULT_RETENTION,
                StoreFailurePolicy.REJECT, false);
    }

    public static ConsumerSettings withLedger(ConsumerSettings s, boolean ledger) {
        return of(s.consumer(), s.keyStrategy(), s.keyHeader(), s.keyPointer(), s.fallbackToContent(), s.lease(), s.retention(),
                s.storeFailure(), ledger);
    }

    public static ConsumerSettings withStoreFailure(ConsumerSettings s, StoreFailurePolicy policy) {
        return of(s.consumer(), s.keyStrategy(), s.keyHeader(), s.keyPointer(), s.fallbackToContent(), s.lease(), s.retention(),
                policy, s.ledger());
    }

    public static ConsumerSettings withLease(ConsumerSettings s, Duration lease) {
        return of(s.consumer(), s.keyStrategy(), s.keyHeader(), s.keyPointer(), s.fallbackToContent(), lease, s.retention(),
                s.storeFailure(), s.ledger());
    }

    public static ConsumerSettings withKey(ConsumerSettings s, KeyStrategy strategy, String header, String pointer, boolean fallback) {
        return of(s.consumer(), strategy, header, pointer, fallback, s.lease(), s.retention(), s.storeFailure(), s.ledger());
    }

    private static ConsumerSettings of(String consumer, KeyStrategy strategy, String header, String pointer, boolean fallback,
                                       Duration lease, Duration retention, StoreFailurePolicy storeFailure, boolean ledger) {
        return new ConsumerSettings(consumer, strategy, header, pointer, fallback, lease, retention, storeFailure, ledger);
    }
}
