package dev.onceonly.api;

/**
 * The transactional outbox: messages a handler sends here are written in its transaction, as rows
 * of the table {@code onceonly_outbox} on the ledger's datasource, and published only after that
 * transaction committed. A handler that rolls back sends nothing; an instance that dies after the
 * commit leaves rows that another instance (or this one, restarted) publishes.
 *
 * <p>Inject it ({@code @Inject Outbox outbox}); injecting it turns the outbox and its relay on. The
 * table's DDL ships beside the ledger's, in {@code META-INF/onceonly/ddl/}.
 *
 * <p>Delivery is at least once, with a stable message id: a relay that dies after the broker
 * confirmed a row and before it marked the row sent publishes it again, with the same id. A consumer
 * guarding on the message id (for example {@code @IdempotentMessage(keyStrategy = KeyStrategy.MESSAGE_ID)})
 * therefore applies each message once.
 */
public interface Outbox {

    /**
     * Writes {@code message} into the outbox in the current JTA transaction; it is published after
     * that transaction commits, and never when it rolls back. Messages of one transaction are
     * published in the order they were sent.
     *
     * <p>The message id, unless the message has one: inside a guarded handler,
     * {@code <guard key>/<n>}, where {@code n} counts the sends of this run of the handler from 1,
     * whichever transaction each is in (its own, or a {@code REQUIRES_NEW} one it starts), so no two
     * messages of a run share an id, and a handler that runs again for the same message (after a
     * rollback) sends the same ids; a guarded method the handler calls counts its own. Outside a
     * guarded handler, a random UUID.
     *
     * <p>A message whose id (derived or its own) is already in the outbox, committed, with the same
     * exchange, routing key, body, content type, correlation id and persistence, is not written again:
     * this happens when a {@code REQUIRES_NEW} transaction of an earlier run committed it and that
     * run's own transaction rolled back. Headers are not compared (they carry the run's trace context).
     * Once the relay's purge deleted the row ({@code onceonly.outbox.retention}), the message is
     * written and published again, with the same id.
     *
     * @param message the message
     * @return the message id it will be published with
     * @throws OnceOnlyException when no transaction is active on this thread, when a different
     *                           message with the same id is already in the outbox (the handler does
     *                           not send the same messages on every run), or the row cannot be
     *                           written (the transaction must then roll back)
     */
    String send(OutboxMessage message);
}
