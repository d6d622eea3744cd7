package dev.onceonly.spi;

/**
 * Answer of {@link ClaimStore#claim}.
 *
 * @param state       what the store found
 * @param fingerprint the fingerprint stored with an existing key (empty for {@link ClaimState#ACQUIRED})
 * @param fence       for {@link ClaimState#ACQUIRED}: the claim's fencing token, positive, greater than
 *                    that of every earlier claim of the key (see the {@link ClaimStore} contract); 0 when
 *                    the store gave none, and always 0 for the other states
 */
public record ClaimResult(ClaimState state, String fingerprint, long fence) {

    /** The key was absent and is now held by the caller; the store gave no fence. */
    public static final ClaimResult ACQUIRED = new ClaimResult(ClaimState.ACQUIRED, "", 0);

    /**
     * An answer without a fence.
     *
     * @param state       what the store found
     * @param fingerprint the fingerprint stored with an existing key
     */
    public ClaimResult(ClaimState state, String fingerprint) {
        this(state, fingerprint, 0);
    }

    /**
     * The key was absent and is now held by the caller, with a fencing token.
     *
     * @param fence the claim's fencing token, positive
     * @return the answer {@link ClaimState#ACQUIRED}
     * @throws IllegalArgumentException if {@code fence} is not positive
     */
    public static ClaimResult acquired(long fence) {
        if (fence <= 0) {
            throw new IllegalArgumentException("a fence is positive: " + fence);
        }
        return new ClaimResult(ClaimState.ACQUIRED, "", fence);
    }

    /**
     * The key was processed before.
     *
     * @param fingerprint the fingerprint stored with the key
     * @return the answer {@link ClaimState#DONE}
     */
    public static ClaimResult done(String fingerprint) {
        return new ClaimResult(ClaimState.DONE, fingerprint);
    }

    /**
     * Another holder is working on the key.
     *
     * @param fingerprint the fingerprint stored with the key
     * @return the answer {@link ClaimState#IN_PROGRESS}
     */
    public static ClaimResult inProgress(String fingerprint) {
        return new ClaimResult(ClaimState.IN_PROGRESS, fingerprint);
    }
}
