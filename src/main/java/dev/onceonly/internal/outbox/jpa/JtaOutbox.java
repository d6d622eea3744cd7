package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.Outbox;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.support.CurrentKey;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The {@link Outbox} on JTA: each send is a row appended in the caller's transaction; when that
 * transaction commits, the ids of its rows go to the relay at once (the fast path), from the
 * transaction's {@code afterCompletion}. What a transaction sent is kept as a resource of that
 * transaction in the {@link TransactionSynchronizationRegistry}, so nothing is shared between
 * transactions or threads.
 *
 * <p>Inside a guarded handler a message's id is {@code <guard key>/<n>}, {@code n} counted by the
 * handler run ({@link CurrentKey#nextSendNumber}), not by the transaction: a handler that sends from
 * its own transaction and from a {@code REQUIRES_NEW} one gets distinct ids (counted per
 * transaction, both would be {@code /1}, and the second insert would wait on the same thread for the
 * first transaction's uncommitted row until the lock wait gave up).
 *
 * <p>A batch's handler has no key: what it sends in the batch's own transaction gets a random id and
 * commits with the batch, once. A send from a {@code REQUIRES_NEW} transaction it starts commits
 * apart, and every run of the batch (after a failure, in halves) sends it again: without an id of
 * its own it is refused, so the batch fails and its messages run alone, where each has its key.
 *
 * <p>A send is one insert that writes nothing when its id (derived, or set by the message) is
 * already in the outbox ({@link OutboxStore#append}); only then is that row read. A row committed
 * with the same source, exchange, routing key, body, content type, correlation id and persistence
 * is the same message, sent by an earlier run whose {@code REQUIRES_NEW} transaction committed while
 * its own rolled back; the send returns the id. Headers are not compared: they carry the sending
 * run's trace context. A different message under that id fails the send ({@link OnceOnlyException})
 * instead of the unique key failing it on every retry. Such a send still records its {@code create}
 * span: the trace context goes into the row before the insert.
 *
 * <p>A send is a PRODUCER span ({@code <exchange> create}) whose trace context is written into the
 * row's headers: the message carries the sender's trace whenever and wherever the relay publishes it.
 */
public final class JtaOutbox implements Outbox {

    /** The registry key of a transaction's {@link Sends}. */
    private static final Object SENDS = new Object();

    private final OutboxStore store;
    private final TransactionSynchronizationRegistry transactions;
    private final Consumer<List<Long>> committed;
    private final Clock clock;
    private final MessageTracing tracing;

    /**
     * @param store        where rows are written
     * @param transactions the server's registry
     * @param committed    told the ids of a transaction's rows after it committed (never after a rollback);
     *                     must return quickly, it runs on the committing thread
     * @param clock        the time written into each row
     * @param tracing      what writes the sender's trace context into each message's headers
     */
    public JtaOutbox(OutboxStore store, TransactionSynchronizationRegistry transactions, Consumer<List<Long>> committed,
                     Clock clock, MessageTracing tracing) {
        this.store = Objects.requireNonNull(store, "store");
        this.transactions = Objects.requireNonNull(transactions, "transactions");
        this.committed = Objects.requireNonNull(committed, "committed");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.tracing = Objects.requireNonNull(tracing, "tracing");
    }

    @Override
    public String send(OutboxMessage message) {
        if (transactions.getTransactionStatus() != Status.STATUS_ACTIVE) {
            throw new OnceOnlyException("Outbox.send needs an active JTA transaction (a guarded handler, or a method with "
                    + "@Transactional): the message commits with it; transaction status " + transactions.getTransactionStatus());
        }
        if (message.messageId() == null && CurrentKey.apartFromTheBatch(transactions.getTransactionKey())) {
            throw new OnceOnlyException("Outbox.send from a transaction a batch handler started apart from the batch's"
                    + " (REQUIRES_NEW) needs the message's own id (OutboxMessage.withMessageId, say from the order "
                    + "it is about): it commits even when the batch fails, and the batch's next run would send it "
                    + "again under a new id. Sent once its message runs alone (under that message's key), or in the "
                    + "batch's own transaction");
        }
        String key = CurrentKey.get();
        String id = message.messageId() != null ? message.messageId()
                : key != null ? key + "/" + CurrentKey.nextSendNumber() : UUID.randomUUID().toString();
        String source = key != null ? key : id;
        OptionalLong row = store.append(new OutboxRecord(0, id, source, traced(message.withMessageId(id)), clock.instant(), 0));
        if (row.isEmpty()) {
            OutboxRecord existing = store.find(id).orElseThrow(() -> new OnceOnlyException("Outbox.send: the row of this"
                    + " message id was deleted between the insert and the read (purged); the send may be tried again"));
            if (!sameMessage(existing, source, message)) {
                throw new OnceOnlyException("Outbox.send: a different message with this message id is already in the outbox"
                        + " (committed by an earlier run of this handler, for example in a REQUIRES_NEW transaction, or an id"
                        + " set twice); a handler must send the same messages in the same order on every run, or set ids of"
                        + " its own. The message in the outbox stays as it is");
            }
            return id; // sent by an earlier run: its row is relayed as any other
        }
        Sends sends = (Sends) transactions.getResource(SENDS);
        if (sends == null) {
            sends = new Sends();
            transactions.putResource(SENDS, sends);
            transactions.registerInterposedSynchronization(sends);
        }
        sends.rows.add(row.getAsLong());
        return id;
    }

    /**
     * Whether the row in the table is {@code m} sent from {@code source}; headers aside (they carry a
     * run's trace context). A source that is the message id itself was sent where no key was current
     * (a batch's run): the same message sent by a batch and again by its message's run alone, after
     * the batch failed, differs only there, and is the same message.
     */
    private static boolean sameMessage(OutboxRecord row, String source, OutboxMessage m) {
        OutboxMessage stored = row.message();
        boolean sameSource = row.source().equals(source) || row.source().equals(row.messageId())
                || source.equals(row.messageId());
        return sameSource && Objects.equals(stored.exchange(), m.exchange())
                && Objects.equals(stored.routingKey(), m.routingKey()) && Arrays.equals(stored.body(), m.body())
                && Objects.equals(stored.contentType(), m.contentType())
                && Objects.equals(stored.correlationId(), m.correlationId()) && stored.persistent() == m.persistent();
    }

    /** The message with the trace context current now (the sender's) in its headers, unless it set its own. */
    private OutboxMessage traced(OutboxMessage m) {
        MessageTracing.Produced created = tracing.produce(MessageTracing.Operation.CREATE, m.exchange(), m.headers());
        created.span().end();
        if (created.headers() == m.headers()) {
            return m;
        }
        return new OutboxMessage(m.exchange(), m.routingKey(), m.body(), m.contentType(), m.messageId(), m.correlationId(),
                m.persistent(), created.headers());
    }

    /** The rows one transaction wrote, handed to the relay when it commits. */
    private final class Sends implements Synchronization {
        final List<Long> rows = new ArrayList<>();

        @Override
        public void beforeCompletion() {
        }

        @Override
        public void afterCompletion(int status) {
            if (status == Status.STATUS_COMMITTED && !rows.isEmpty()) {
                committed.accept(List.copyOf(rows));
            }
        }
    }
}
