package dev.onceonly.api;

/**
 * Base of every exception OnceOnly throws. Unchecked. Subclasses carry structured fields
 * (consumer, property, key digest) and never message bodies or secrets.
 */
public class OnceOnlyException extends RuntimeException {

    /**
     * An exception without a cause.
     *
     * @param message the detail message
     */
    public OnceOnlyException(String message) {
        super(message);
    }

    /**
     * An exception with a cause.
     *
     * @param message the detail message
     * @param cause the cause
     */
    public OnceOnlyException(String message, Throwable cause) {
        super(message, cause);
    }
}
