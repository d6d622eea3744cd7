package dev.onceonly.spi;

/**
 * Answer of {@link ClaimStore#claim}.
 *
 * @param state       what the store found
 * @param fingerprint the fingerprint stored with an existing key (empty for {@link ClaimState#ACQUIRED})
 */
public record ClaimResult(ClaimState state, String fingerprint) {

    public static final ClaimResult ACQUIRED = new ClaimResult(ClaimState.ACQUIRED, "");

    public static ClaimResult done(String fingerprint) {
        return new ClaimResult(ClaimState.DONE, fingerprint);
    }

    public static ClaimResult inProgress(String fingerprint) {
        return new ClaimResult(ClaimState.IN_PROGRESS, fingerprint);
    }
}
