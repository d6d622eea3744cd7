package dev.onceonly.testing;

import dev.onceonly.internal.jta.JtaTransactionRunner;
import dev.onceonly.internal.ledger.jpa.ProcessedMessage;
import jakarta.persistence.EntityManager;
import jakarta.persistence.TransactionRequiredException;
import jakarta.transaction.Status;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The emulated container transactions behave as the ledger and the runner expect from Liberty's, on H2. */
class LocalJtaTest {

    private static ScratchDatabase db;
    private static LocalJta jta;
    private static EntityManager em;

    @BeforeAll
    static void open() throws Exception {
        db = ScratchDatabase.create(ScratchDatabase.Kind.H2, true);
        jta = new LocalJta(db.sessionFactory());
        em = jta.entityManager();
    }

    @AfterAll
    static void close() throws Exception {
        db.close();
    }

    @Test
    void entityManagerOutsideATransactionIsRefused() {
        assertThrows(TransactionRequiredException.class, () -> em.persist(row()));
    }

    @Test
    void newTransactionCommitsOnItsOwnAndResumesTheCallersTransaction() throws Exception {
        ProcessedMessage inner = row();
        ProcessedMessage outer = row();
        jta.begin();
        Object callers = jta.getTransactionKey();
        em.persist(outer);
        em.flush();
        jta.call(() -> {
            assertNull(em.find(ProcessedMessage.class, outer.msgId()), "the suspended transaction's row is not visible");
            em.persist(inner);
            return null;
        });
        assertSame(callers, jta.getTransactionKey(), "resumed");
        assertSame(outer, em.find(ProcessedMessage.class, outer.msgId()), "the caller's entity manager again");
        jta.rollback();

        assertNotNull(read(inner.msgId()), "the new transaction committed");
        assertNull(read(outer.msgId()), "the caller's transaction rolled back");
        assertEquals(Status.STATUS_NO_TRANSACTION, jta.getStatus());
    }

    @Test
    void newTransactionThatThrowsRollsBack() {
        ProcessedMessage inner = row();
        assertThrows(IllegalStateException.class, () -> jta.call(() -> {
            em.persist(inner);
            em.flush();
            throw new IllegalStateException("work failed");
        }));
        assertNull(read(inner.msgId()));
    }

    @Test
    void jtaTransactionRunnerReportsCommitAndRollbackFromTheTransaction() throws Exception {
        JtaTransactionRunner runner = new JtaTransactionRunner(jta, jta);
        List<Boolean> reported = new ArrayList<>();
        ProcessedMessage committed = row();
        runner.run(() -> {
            em.persist(committed);
            return null;
        }, reported::add);
        ProcessedMessage failed = row();
        assertThrows(IOException.class, () -> runner.run(() -> {
            em.persist(failed);
            em.flush();
            throw new IOException("handler failed");
        }, reported::add));

        assertEquals(List.of(true, false), reported);
        assertNotNull(read(committed.msgId()));
        assertNull(read(failed.msgId()));
    }

    @Test
    void aJoinedTransactionIsReportedWhenTheCallerEndsIt() throws Exception {
        JtaTransactionRunner runner = new JtaTransactionRunner(jta, jta);
        List<Boolean> reported = new ArrayList<>();
        jta.begin();
        runner.run(() -> "joined", reported::add);
        assertEquals(List.of(), reported);
        jta.commit();
        assertEquals(List.of(true), reported);
    }

    private static ProcessedMessage row() {
        return new ProcessedMessage("oo:local-jta:" + UUID.randomUUID(), "local-jta", "0".repeat(64), Instant.now());
    }

    private static ProcessedMessage read(String key) {
        return jta.call(() -> em.find(ProcessedMessage.class, key));
    }
}
