package dev.onceonly.demo.inventory;

/**
 * An order that must not be acted on (see {@link Order}). Thrown before the handler touches stock,
 * so the transaction rolls back with no effect. Another delivery would fail the same way, so the
 * consumer lists it as not worth retrying ({@code @IdempotentMessage(noRetryFor = ...)}; as an
 * {@link IllegalArgumentException} it is also one of the guard's defaults): the connector
 * dead-letters the message after its first attempt, with this exception's class and message as the
 * reason ({@code x-onceonly-reason}).
 */
public class InvalidOrderException extends IllegalArgumentException {

    public InvalidOrderException(String message) {
        super("invalid order: " + message);
    }
}
