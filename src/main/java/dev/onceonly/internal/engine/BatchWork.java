package dev.onceonly.internal.engine;

import java.util.List;

/**
 * A guarded method that takes several messages at once ({@link GuardEngine#guardAll}).
 *
 * @param <T> what it returns
 */
@FunctionalInterface
public interface BatchWork<T> {
    /**
     * Handles the messages at these positions of the batch, in the transaction the guard runs it in.
     * Called once per transaction, possibly more than once per batch (after a failure, for halves).
     *
     * @param positions positions in the batch's dispatches, ascending
     * @return what the method returned
     * @throws Exception what the method threw
     */
    T call(List<Integer> positions) throws Exception;
}
