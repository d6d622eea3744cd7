package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.support.CurrentKey;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import org.hibernate.Session;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How {@link JtaOutbox} numbers a guarded handler's messages, on a scratch database with the
 * container's transactions emulated by {@link LocalJta} ({@link LocalJta#call} is {@code REQUIRES_NEW}).
 * Every transaction these tests open waits at most {@link #LOCK_WAIT_SECONDS} for a row lock: two
 * transactions of one thread writing the same message id wait on each other, and that must fail the
 * test fast instead of hanging it. One subclass per database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JtaOutboxTestBase {

    private static final int LOCK_WAIT_SECONDS = 2;

    private ScratchDatabase db;
    LocalJta jta;
    OutboxStore store;
    JtaOutbox outbox;
    final List<Long> committed = Collections.synchronizedList(new ArrayList<>());

    protected abstract ScratchDatabase.Kind kind();

    @BeforeAll
    void createDatabase() throws Exception {
        db = ScratchDatabase.create(kind(), true);
        jta = new LocalJta(db.sessionFactory());
        store = new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "oo:");
        outbox = new JtaOutbox(store, jta, committed::addAll, Clock.systemUTC(), MessageTracing.NONE);
    }

    @AfterAll
    void dropDatabase() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    @BeforeEach
    void empty() throws Exception {
        committed.clear();
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.executeUpdate("delete from onceonly_outbox");
        }
    }

    static OutboxMessage message(String text) {
        return OutboxMessage.text("orders", "order.reserved", text);
    }

    /** Runs {@code work} as one run of the guarded handler of {@code key}, in a new transaction of its own. */
    <T> T handlerRun(String key, ThrowingSupplier<T> work) throws Exception {
        return jta.inTransaction(() -> {
            boundLockWait();
            try (CurrentKey.Scope run = CurrentKey.enter(key, 0)) {
                return work.get();
            }
        });
    }

    /** Runs {@code work} in a {@code REQUIRES_NEW} transaction, as a bean's method with that attribute would. */
    <T> T requiresNew(ThrowingSupplier<T> work) {
        return jta.call(() -> {
            boundLockWait();
            try {
                return work.get();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Bounds the current transaction's lock waits, the same way on each database. */
    private void boundLockWait() {
        String sql = switch (kind()) {
            case POSTGRESQL -> "set local lock_timeout = '" + LOCK_WAIT_SECONDS + "s'";
            case MARIADB -> "set session innodb_lock_wait_timeout = " + LOCK_WAIT_SECONDS;
            case H2 -> "set lock_timeout " + LOCK_WAIT_SECONDS * 1000;
        };
        jta.entityManager().unwrap(Session.class).doWork(c -> {
            try (Statement s = c.createStatement()) {
                s.execute(sql);
            }
        });
    }

    /** Committed rows: message id → body. */
    Map<String, String> rows() throws Exception {
        Map<String, String> rows = new TreeMap<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select message_id, body from onceonly_outbox")) {
            while (r.next()) {
                rows.put(r.getString(1), new String(r.getBytes(2), StandardCharsets.UTF_8));
            }
        }
        return rows;
    }

    @FunctionalInterface
    interface ThrowingSupplier<T> {
        T get() throws Exception;
    }

    /**
     * The handler sends one message in its own transaction, one from a {@code REQUIRES_NEW} bean, and
     * one more in its own: three messages of one run, three ids. Numbered per transaction, the inner
     * send took {@code /1} again and its insert waited for the outer transaction's row, on the same
     * thread, until the lock wait gave up.
     */
    @Test
    void aSendFromARequiresNewTransactionOfTheSameRunTakesTheNextNumber() throws Exception {
        List<String> ids = handlerRun("orders:k1", () -> List.of(
                outbox.send(message("first")),
                requiresNew(() -> outbox.send(message("inner"))),
                outbox.send(message("last"))));
        assertEquals(List.of("orders:k1/1", "orders:k1/2", "orders:k1/3"), ids);
        assertEquals(Map.of("orders:k1/1", "first", "orders:k1/2", "inner", "orders:k1/3", "last"), rows());
        assertEquals(3, committed.size(), "each transaction handed its own row to the relay");
    }

    @Test
    void aNewRunOfTheSameMessageNumbersFromOneAgain() throws Exception {
        assertThrows(IllegalStateException.class, () -> handlerRun("orders:k2", () -> {
            outbox.send(message("a"));
            outbox.send(message("b"));
            throw new IllegalStateException("the handler failed");
        }));
        List<String> ids = handlerRun("orders:k2", () -> List.of(outbox.send(message("a")), outbox.send(message("b"))));
        assertEquals(List.of("orders:k2/1", "orders:k2/2"), ids, "the rolled-back run's ids, reused");
        assertEquals(Map.of("orders:k2/1", "a", "orders:k2/2", "b"), rows());
    }

    /**
     * A guarded bean called from a guarded handler runs under its own key, in a transaction of its
     * own: it numbers its sends from 1, and the handler's numbering goes on after it returns.
     */
    @Test
    void aNestedGuardedCallNumbersItsOwnSendsAndTheOuterRunContinuesAfterIt() throws Exception {
        List<String> ids = handlerRun("orders:k3", () -> {
            List<String> sent = new ArrayList<>();
            sent.add(outbox.send(message("outer 1")));
            sent.addAll(requiresNew(() -> {
                try (CurrentKey.Scope nested = CurrentKey.enter("audit:k3", 0)) {
                    return List.of(outbox.send(message("nested 1")), outbox.send(message("nested 2")));
                }
            }));
            sent.add(outbox.send(message("outer 2")));
            return sent;
        });
        assertEquals(List.of("orders:k3/1", "audit:k3/1", "audit:k3/2", "orders:k3/2"), ids);
        assertEquals(4, rows().size());
    }

    @Test
    void anExplicitIdIsKeptAndTakesNoNumberAndWithoutAKeyTheIdIsRandom() throws Exception {
        List<String> ids = handlerRun("orders:k4", () -> List.of(
                outbox.send(message("explicit").withMessageId("mine-1")),
                outbox.send(message("derived"))));
        assertEquals(List.of("mine-1", "orders:k4/1"), ids);
        String random = jta.inTransaction(() -> outbox.send(message("no key")));
        assertEquals(random, UUID.fromString(random).toString(), "outside a guarded handler: a random UUID");
        assertEquals(Map.of("mine-1", "explicit", "orders:k4/1", "derived", random, "no key"), rows());
    }

    /**
     * A batch's run has no key: a send in the batch's own transaction gets a random id (it commits
     * with the batch, once); one from a {@code REQUIRES_NEW} transaction commits apart, and every run
     * of the batch would send it again under a new id, so it is refused unless it has its own id.
     */
    @Test
    void aBatchRunRefusesARequiresNewSendWithoutItsOwnId() throws Exception {
        List<String> ids = jta.inTransaction(() -> {
            try (CurrentKey.Scope batch = CurrentKey.enterBatch(jta.getTransactionKey())) {
                String own = outbox.send(message("in the batch's transaction"));
                OnceOnlyException refused = assertThrows(OnceOnlyException.class,
                        () -> requiresNew(() -> outbox.send(message("apart, no id"))));
                assertTrue(refused.getMessage().contains("withMessageId"), refused.getMessage());
                return List.of(own, requiresNew(() -> outbox.send(message("apart, own id").withMessageId("batch-own-1"))));
            }
        });
        assertEquals(ids.get(0), UUID.fromString(ids.get(0)).toString(), "random in the batch's transaction");
        assertEquals(Map.of(ids.get(0), "in the batch's transaction", "batch-own-1", "apart, own id"), rows());
    }

    /**
     * The handler's {@code REQUIRES_NEW} transaction committed {@code /2}, then the handler failed and
     * its own transaction rolled back. The retry sends {@code /2} again from a new {@code REQUIRES_NEW}
     * transaction: that message is already in the outbox, so the send writes nothing and returns its
     * id (as an insert, it was a unique violation on every retry until the message was dead-lettered).
     */
    @Test
    void aRetryFindsTheMessageItsRequiresNewTransactionCommittedAndDoesNotWriteItAgain() throws Exception {
        assertThrows(IllegalStateException.class, () -> handlerRun("orders:k5", () -> {
            outbox.send(message("outer"));
            requiresNew(() -> outbox.send(message("inner")));
            throw new IllegalStateException("the handler failed after its inner transaction committed");
        }));
        assertEquals(Map.of("orders:k5/2", "inner"), rows());
        committed.clear();
        List<String> ids = handlerRun("orders:k5", () -> List.of(
                outbox.send(message("outer")),
                requiresNew(() -> outbox.send(message("inner")))));
        assertEquals(List.of("orders:k5/1", "orders:k5/2"), ids);
        assertEquals(Map.of("orders:k5/1", "outer", "orders:k5/2", "inner"), rows());
        assertEquals(1, committed.size(), "only the new row went to the relay");
    }

    /**
     * A retry that sends a different message under an id already committed (a handler whose
     * messages differ from run to run) fails the send at once, saying why; it neither waits nor
     * replaces the message already in the outbox.
     */
    @Test
    void aRetryThatSendsADifferentMessageUnderACommittedIdFailsTheSendAtOnce() throws Exception {
        assertThrows(IllegalStateException.class, () -> handlerRun("orders:k6", () -> {
            requiresNew(() -> outbox.send(message("inner, first run")));
            throw new IllegalStateException("the handler failed after its inner transaction committed");
        }));
        OnceOnlyException refused = assertThrows(OnceOnlyException.class, () -> handlerRun("orders:k6",
                () -> requiresNew(() -> outbox.send(message("inner, second run")))));
        assertTrue(refused.getMessage().contains("already in the outbox"), refused.getMessage());
        assertEquals(Map.of("orders:k6/1", "inner, first run"), rows());
    }
}
