package dev.onceonly.spi;

/** State of a key as answered by {@link ClaimStore#claim}. */
public enum ClaimState {
    /** The key was absent and is now held by the caller. */
    ACQUIRED,
    /** The key was processed before and is still retained. */
    DONE,
    /** Another holder (another token) is working on the key. */
    IN_PROGRESS
}
