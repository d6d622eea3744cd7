package dev.onceonly.support;

/**
 * The idempotency key of the guarded handler running on this thread, for the handler's own calls
 * to other services ({@code Idempotency-Key}). Set by the engine around the handler only, restored
 * when a nested guarded call ends. This is not how a message reaches the guard (that is the
 * {@code Dispatch}): it only lets a handler's outgoing calls say which message they belong to.
 */
public final class CurrentKey {

    private static final ThreadLocal<String> KEY = new ThreadLocal<>();

    private CurrentKey() {
    }

    /** {@return the key of the running handler, or {@code null} outside one} */
    public static String get() {
        return KEY.get();
    }

    /**
     * Makes {@code key} current until the returned scope closes.
     *
     * @param key the running handler's key
     * @return the scope that restores the previous key
     */
    public static Scope enter(String key) {
        String previous = KEY.get();
        KEY.set(key);
        return () -> {
            if (previous == null) {
                KEY.remove();
            } else {
                KEY.set(previous);
            }
        };
    }

    /** Restores the previous key. */
    @FunctionalInterface
    public interface Scope extends AutoCloseable {
        /** Restores the key that was current before; never throws. */
        @Override
        void close();
    }
}
