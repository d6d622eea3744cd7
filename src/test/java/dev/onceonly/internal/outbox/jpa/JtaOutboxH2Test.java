package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.ScratchDatabase;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How the outbox numbers a handler's messages, on H2 (for the servers: this machine's, in a scratch schema or database). */
class JtaOutboxH2Test extends JtaOutboxTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.H2;
    }

    /**
     * The insert found the message id's row, and the purge deleted it before the send read it (the
     * row was sent and past its retention): the send fails saying so and that it may be tried again,
     * rather than answering for a message it could not compare. The purge's timing is the store's
     * here: its read answers nothing, as it would after such a purge.
     */
    @Test
    void aRowPurgedBetweenTheInsertAndTheReadFailsTheSendSayingItMayBeTriedAgain() throws Exception {
        handlerRun("orders:k7", () -> outbox.send(message("first run")));
        JtaOutbox purgedInBetween = new JtaOutbox(new PurgedBeforeEveryRead(store), jta, committed::addAll, Clock.systemUTC(),
                MessageTracing.NONE);
        OnceOnlyException failed = assertThrows(OnceOnlyException.class,
                () -> handlerRun("orders:k7", () -> purgedInBetween.send(message("first run"))));
        assertTrue(failed.getMessage().contains("deleted between the insert and the read"), failed.getMessage());
        assertTrue(failed.getMessage().contains("may be tried again"), failed.getMessage());
        assertEquals(Map.of("orders:k7/1", "first run"), rows(), "nothing written by the failed send");
    }

    /** A store whose row reads find nothing, as after a purge between an insert and its read. */
    private record PurgedBeforeEveryRead(OutboxStore store) implements OutboxStore {

        @Override
        public OptionalLong append(OutboxRecord record) {
            return store.append(record);
        }

        @Override
        public Optional<OutboxRecord> find(String messageId) {
            return Optional.empty();
        }

        @Override
        public Relayed relay(Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish,
                             int maxAttempts, Instant now) {
            return store.relay(selection, publish, maxAttempts, now);
        }

        @Override
        public long purge(Instant olderThan, int batchSize) {
            return store.purge(olderThan, batchSize);
        }

        @Override
        public Counts counts() {
            return store.counts();
        }

        @Override
        public void checkReady() {
            store.checkReady();
        }
    }
}
