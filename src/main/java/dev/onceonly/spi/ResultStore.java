package dev.onceonly.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * Where the results of guarded calls that keep them are stored, so that a duplicate of the call gets
 * the first call's result instead of nothing. Beside the claim store, never instead of it: the claim
 * store and the ledger decide what is a duplicate; this store only answers what the first call
 * returned.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>{@code key} is the guard's key of the call ({@code <prefix><consumer>:<digest>}), the one the
 *       claim store and the ledger use; {@code result} is the result as JSON text, never {@code null}
 *       (a {@code null} result is the text {@code null}).</li>
 *   <li>A <em>transactional</em> store ({@link #transactional()}) writes in the guarded call's
 *       transaction: {@link #put} is called inside it, after the ledger row of {@code key} was
 *       inserted in it, and the result commits or rolls back with that transaction. A put that
 *       fails throws, and the transaction must not commit. Any other store's {@link #put} is durable
 *       when it returns; the guard calls it after the call's transaction committed and before the
 *       key is marked done, so that a duplicate that finds the key done finds its result too.</li>
 *   <li>{@link #get} answers the result last put for {@code key} and committed, until
 *       {@code retention} after that put has passed; then, or when none was put (or its transaction
 *       rolled back), it answers empty. A result is never answered for another key.</li>
 *   <li>A put overwrites what an earlier put left under the key.</li>
 *   <li>A store that cannot answer throws a {@link RuntimeException}. It never logs a result, nor
 *       puts one in an exception's message: results are application data.</li>
 * </ul>
 */
public interface ResultStore {

    /** {@return the store's name for logs, e.g. {@code redis} or {@code ledger}} */
    String name();

    /**
     * {@return whether {@link #put} writes in the guarded call's transaction (and must be called
     * inside it), rather than at once}
     */
    boolean transactional();

    /**
     * Stores the result of the call under {@code key}, overwriting any earlier one.
     *
     * @param key       the call's key
     * @param result    the result as JSON text
     * @param retention how long {@link #get} answers it
     * @throws RuntimeException when the store cannot write it
     */
    void put(String key, String result, Duration retention);

    /**
     * The result stored under {@code key}.
     *
     * @param key the call's key
     * @return the result as JSON text; empty when none was stored, it was rolled back, or its
     *         retention has passed
     * @throws RuntimeException when the store cannot answer
     */
    Optional<String> get(String key);
}
