package dev.onceonly.api;

/**
 * What a message whose key was processed before, but whose body differs, is: the same message sent
 * again ({@link Outcome#DUPLICATE}) or another message under a reused key ({@link Outcome#CONFLICT}).
 * Which parts of the body are compared is the consumer's {@code conflict-fields}. Applies to
 * explicit keys only: a content key already covers the whole body.
 */
public enum ConflictPolicy {
    /** Not chosen explicitly: {@link #STRICT}. */
    DEFAULT,
    /**
     * A body that differs from the first one under the same key is a {@link Outcome#CONFLICT}: every
     * byte of it, or only the values at the consumer's {@code conflict-fields}.
     */
    STRICT,
    /** Any body under a key processed before is a {@link Outcome#DUPLICATE}: bodies are not compared. */
    IGNORE;

    /** {@return the configuration spelling: lower case ({@code ignore})} */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
