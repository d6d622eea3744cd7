package dev.onceonly.internal.result;

import dev.onceonly.internal.support.LogId;
import dev.onceonly.spi.ResultStore;

import java.time.Duration;

/**
 * A result to be written to a store that is not transactional, once the call's transaction
 * committed and before the key is marked done ({@link ResultWrites}): what a keeping handler returns
 * in place of the method's result, which it carries.
 *
 * @param returned  what the method returned
 * @param store     where the result goes
 * @param key       the call's key
 * @param json      the result as JSON
 * @param retention how long the store gives it
 * @param consumer  the consumer, for the log
 */
record PendingResult(Object returned, ResultStore store, String key, String json, Duration retention, String consumer) {

    /**
     * Writes the result. A store that fails is logged, and the key is marked done all the same: the
     * effect committed, and its duplicates get no result rather than a second effect.
     */
    void write() {
        try {
            store.put(key, json, retention);
        } catch (RuntimeException e) {
            LogId.ONCE0903W.log(consumer, digest(key), store.name(), e.getClass().getName());
        }
    }

    /** The digest a key ends with ({@code <prefix><consumer>:<digest>}): what a log line may show of it. */
    static String digest(String key) {
        return key == null ? "" : key.substring(key.lastIndexOf(':') + 1);
    }

    /** Never the result: results are application data. */
    @Override
    public String toString() {
        return "PendingResult[" + store.name() + "]";
    }
}
