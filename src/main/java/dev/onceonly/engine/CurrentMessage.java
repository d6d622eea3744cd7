package dev.onceonly.engine;

import dev.onceonly.api.MessageView;

/**
 * The message being dispatched on this thread, for guarded methods whose parameters carry only the
 * payload. A connector sets it around the synchronous invocation of the consumer method; the guard
 * reads it when no parameter carries the message itself.
 */
public final class CurrentMessage {

    private static final ThreadLocal<MessageView> CURRENT = new ThreadLocal<>();

    private CurrentMessage() {
    }

    /** The message being dispatched on this thread, or {@code null}. */
    public static MessageView get() {
        return CURRENT.get();
    }

    /** Makes {@code message} current until the returned scope is closed (use try-with-resources). */
    public static Scope enter(MessageView message) {
        MessageView previous = CURRENT.get();
        CURRENT.set(message);
        return () -> {
            if (previous == null) {
                CURRENT.remove();
            } else {
                CURRENT.set(previous);
            }
        };
    }

    /** Restores the previous message on close. */
    @FunctionalInterface
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }
}
