package dev.onceonly.api;

import java.util.Objects;

/**
 * What a guarded method that keeps its result returns, when its caller must tell a call that ran
 * from a duplicate answered with the first call's stored result (an HTTP resource, to say so in a
 * header such as {@code Idempotent-Replayed: true}).
 *
 * <p>The method returns {@code Replayable.of(value)}; the guard stores {@code value} as JSON (with
 * JSON-B, by the method's generic return type, e.g. {@code Replayable<Receipt>} stores a
 * {@code Receipt}), which turns result keeping on for the consumer unless
 * {@code onceonly.consumers.<consumer>.result.keep=false} says otherwise. A duplicate of the call
 * then returns a {@code Replayable} with {@link #replayed()} {@code true} and the stored value; a
 * duplicate whose result is not stored (not kept then, over {@code result.max-size}, past
 * {@code result.retention}, or not readable) returns {@code null}, as a duplicate of a method that
 * keeps nothing does. A {@code CONFLICT} or another refusal is thrown as ever.
 *
 * @param <T> the result's type
 */
public final class Replayable<T> {

    private final T value;
    private final boolean replayed;

    private Replayable(T value, boolean replayed) {
        this.value = value;
        this.replayed = replayed;
    }

    /**
     * A result of the method itself: what a guarded method returns.
     *
     * @param <T>   the result's type
     * @param value the result; may be {@code null}
     * @return the result, not replayed
     */
    public static <T> Replayable<T> of(T value) {
        return new Replayable<>(value, false);
    }

    /**
     * A stored result given back to a duplicate: made by the guard.
     *
     * @param <T>   the result's type
     * @param value the first call's result, as stored
     * @return the result, replayed
     */
    public static <T> Replayable<T> replayed(T value) {
        return new Replayable<>(value, true);
    }

    /** {@return the result: the method's own, or the first call's for a replay} */
    public T value() {
        return value;
    }

    /** {@return whether the method did not run and this is the first call's stored result} */
    public boolean replayed() {
        return replayed;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Replayable<?> r && replayed == r.replayed && Objects.equals(value, r.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(value, replayed);
    }

    /** Says whether it was replayed, never the value: results are application data. */
    @Override
    public String toString() {
        return replayed ? "Replayable[replayed]" : "Replayable[returned]";
    }
}
