package dev.onceonly.demo.inventory;

/**
 * An order that must not be acted on (see {@link Order}). Thrown before the handler touches stock,
 * so the transaction rolls back with no effect. The connector treats it like any failure: the
 * message is tried again up to {@code max-attempts} and then dead-lettered with this exception's
 * class and message as the reason ({@code x-onceonly-reason}).
 */
public class InvalidOrderException extends IllegalArgumentException {

    public InvalidOrderException(String message) {
        super("invalid order: " + message);
    }
}
