package dev.onceonly.spi;

/**
 * Answer of {@link ClaimStore#claim}.
 *
 * @param state       what the store found
 * @param fingerprint the fingerprint stored with an existing key (empty for {@link ClaimState#ACQUIRED})
 */
public record ClaimResult(ClaimState state, String fingerprint) {

    /** The key was absent and is now held by the caller. */
    public static final ClaimResult ACQUIRED = new ClaimResult(ClaimState.ACQUIRED, "");

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
