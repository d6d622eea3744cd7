package dev.onceonly.api;

/**
 * Base of every exception OnceOnly throws. Unchecked. Subclasses carry structured fields
 * (consumer, property, key digest) and never message bodies or secrets.
 */
public class OnceOnlyException extends RuntimeException {

    public OnceOnlyException(String message) {
        super(message);
    }

    public OnceOnlyException(String message, Throwable cause) {
        super(message, cause);
    }
}
