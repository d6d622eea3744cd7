package dev.onceonly.internal.outbox;

import dev.onceonly.api.OutboxMessage;

import java.time.Instant;
import java.util.Objects;

/**
 * One row of the outbox: the message and what the relay needs to publish it in order.
 *
 * @param id        the row's id, increasing in the order rows were written; 0 before it was written
 * @param messageId the message id it is published with (unique in the outbox)
 * @param source    the guard key of the handler that sent it (the unit whose order is kept), or the
 *                  message id when it was sent outside a guarded handler
 * @param message   the message, its {@link OutboxMessage#messageId()} equal to {@code messageId}
 * @param createdAt when it was written
 * @param attempts  how many publishes of it the broker refused so far
 */
public record OutboxRecord(long id, String messageId, String source, OutboxMessage message, Instant createdAt, int attempts) {

    /**
     * Checks that nothing is missing.
     *
     * @param id        the row's id, 0 before it was written
     * @param messageId the message id it is published with
     * @param source    the guard key of the handler that sent it, or the message id
     * @param message   the message
     * @param createdAt when it was written
     * @param attempts  broker refusals so far
     */
    public OutboxRecord {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(createdAt, "createdAt");
    }
}
