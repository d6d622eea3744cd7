package dev.onceonly.internal.engine;

import dev.onceonly.testing.ForwardingClaimStore;
import dev.onceonly.testing.Guarded;
import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.jdbc.JdbcClaimStore;
import dev.onceonly.internal.ledger.jpa.JpaLedger;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.jta.JtaTransactionRunner;
import dev.onceonly.internal.ledger.jpa.ProcessedMessage;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.Ledger.LedgerDecision;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.ScratchDatabase;
import dev.onceonly.testing.Settings;
import dev.onceonly.testing.TestRedis;
import jakarta.persistence.PersistenceException;
import jakarta.transaction.Status;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guard with the ledger on: the in-memory claim store, real transactions ({@link LocalJta} on
 * H2, through the production {@link JtaTransactionRunner}), and either the real {@link JpaLedger}
 * on that database or a {@link ScriptedLedger} answering chosen decisions. Every test looks at the
 * state left behind: the claim in the store, the rows in the database, how the transaction ended
 * and what the listener was told.
 */
class GuardEngineLedgerTest extends LedgerOnEngineTest {

    private final Recorder listener = new Recorder();
    private final InMemoryClaimStore store = new InMemoryClaimStore(10_000, clock);
    private final JpaLedger jpaLedger = new JpaLedger("oo:", LedgerSchema.Part.LEDGER.shipped(), () -> em, jta, clock);
    private final AtomicInteger runs = new AtomicInteger();
    private final String consumer = "ledger-" + UUID.randomUUID().toString().substring(0, 8);
    private final ConsumerSettings settings = Settings.withLedger(Settings.defaults(consumer, KeyStrategy.CONTENT), true);

    private GuardEngine engine = engine(store, jpaLedger);

    // ---- the ledger's decisions ----

    @Test
    void processedMessageCommitsItsLedgerRowWithTheBusinessWrite() throws Exception {
        MessageView m = message("{\"order\":1}");
        MessageKey key = keyOf(settings, m);
        assertEquals("ran-1", guard(settings, m, businessWrite("order-1")));

        assertEquals(List.of(true), transactionEnds);
        assertEquals(key.comparedHashHex(), ledgerRow(key.storeKey()).orElseThrow().bodySha256());
        assertTrue(ledgerRow(business("order-1")).isPresent(), "the business write committed with it");
        assertEquals(ClaimState.DONE, claimState(key));
        assertEquals(List.of(event(Outcome.PROCESSED, Layer.NONE, key)), listener.outcomes);
        assertEquals(List.of(LedgerDecision.INSERTED), listener.decisions);
    }

    @Test
    void ledgerDuplicateSkipsTheHandlerAndCompletesTheClaim() throws Exception {
        engine = engine(store, ScriptedLedger.answering(LedgerDecision.DUPLICATE));
        MessageView m = message("{\"order\":2}");
        MessageKey key = keyOf(settings, m);

        assertNull(guard(settings, m, businessWrite("order-2")));

        assertEquals(0, runs.get(), "handler not run");
        assertEquals(List.of(false), transactionEnds, "the transaction of the refused message rolled back");
        assertEquals(ClaimResult.done(key.fingerprint()), store.claim(key.storeKey(), "later", key.fingerprint(), settings.lease()),
                "the claim is completed, so the next duplicate stops at the claim store");
        assertEquals(List.of(event(Outcome.DUPLICATE, Layer.LEDGER, key)), listener.outcomes, "reported once");
        assertEquals(List.of(LedgerDecision.DUPLICATE), listener.decisions);
    }

    /**
     * Inside a transaction of the caller's own, a ledger DUPLICATE cannot return as skipped: the
     * failed insert spoiled that transaction (marked rollback-only). Before, the guard returned null
     * and the caller found out only when its commit failed.
     */
    @Test
    void aLedgerDuplicateInsideTheCallersTransactionIsThrownNotHidden() throws Exception {
        MessageView m = message("{\"order\":\"joined\"}");
        guard(settings, m, businessWrite("order-joined"));
        engine = engine(new InMemoryClaimStore(10_000, clock), jpaLedger); // the claim store forgot it

        jta.begin();
        try {
            MessageRefusedException e = assertThrows(MessageRefusedException.class,
                    () -> guard(settings, m, businessWrite("order-joined-again")));
            assertEquals(Outcome.DUPLICATE, e.outcome());
            assertTrue(e.reason().contains("rollback-only"), e.reason());
            assertEquals(Status.STATUS_MARKED_ROLLBACK, jta.getStatus());
        } finally {
            jta.rollback();
        }
        assertEquals(1, runs.get());
        assertEquals(Optional.empty(), ledgerRow(business("order-joined-again")));
    }

    /**
     * A JMS container redelivers at once when the listener's transaction rolls back, as it must
     * after a ledger DUPLICATE inside it: the key is marked done before the transaction ends, not
     * queued behind other marks, so the redelivery is a DUPLICATE at the claim store instead of a
     * BUSY round that spends one of the provider's redeliveries.
     */
    @Test
    void aLedgerDuplicateInsideTheCallersTransactionIsMarkedDoneAtOnce() throws Exception {
        MessageView m = message("{\"order\":\"joined-mark\"}");
        MessageKey key = keyOf(settings, m);
        guard(settings, m, businessWrite("order-joined-mark"));
        InMemoryClaimStore forgetful = new InMemoryClaimStore(10_000, clock);
        HeldCompletions held = new HeldCompletions(forgetful); // batched marks wait at its gate
        engine = engine(held, jpaLedger);

        jta.begin();
        try {
            assertThrows(MessageRefusedException.class, () -> guard(settings, m, businessWrite("order-joined-mark-again")));
        } finally {
            jta.rollback();
        }

        assertEquals(ClaimState.DONE, forgetful.claim(key.storeKey(), "redelivery", key.fingerprint(), settings.lease()).state(),
                "the redelivery finds the key done");
        held.gate.countDown();
    }

    /**
     * A JMS provider takes the message back when the listener's transaction rolls back, before the
     * transaction's synchronizations (the engine's completion) run, and may redeliver it at once:
     * the key is marked done before the caller's transaction ends, so even that redelivery finds
     * it done. The completion then writes nothing more (no lost lease reported).
     */
    @Test
    void aLedgerDuplicateInsideTheCallersTransactionIsMarkedDoneBeforeItEnds() throws Exception {
        MessageView m = message("{\"order\":\"joined-early\"}");
        MessageKey key = keyOf(settings, m);
        guard(settings, m, businessWrite("order-joined-early"));
        InMemoryClaimStore forgetful = new InMemoryClaimStore(10_000, clock);
        engine = engine(forgetful, jpaLedger);
        listener.outcomes.clear();

        jta.begin();
        try {
            assertThrows(MessageRefusedException.class, () -> guard(settings, m, businessWrite("order-joined-early-again")));
            assertEquals(ClaimState.DONE, forgetful.claim(key.storeKey(), "redelivery", key.fingerprint(), settings.lease()).state(),
                    "a redelivery before the transaction ended finds the key done");
        } finally {
            jta.rollback();
        }

        assertEquals(List.of(event(Outcome.DUPLICATE, Layer.LEDGER, key)), listener.outcomes, "reported once, as the transaction ended");
        assertEquals(List.of(), listener.leasesLost);
    }

    /** The claim store forgot a processed key (flushed, evicted, failed over): the real ledger still knows it. */
    @Test
    void duplicateTheClaimStoreForgotIsCaughtByTheLedger() throws Exception {
        MessageView m = message("{\"order\":3}");
        MessageKey key = keyOf(settings, m);
        guard(settings, m, businessWrite("order-3"));

        InMemoryClaimStore forgetful = new InMemoryClaimStore(10_000, clock);
        engine = engine(forgetful, jpaLedger);
        assertNull(guard(settings, m, businessWrite("order-3-again")));

        assertEquals(1, runs.get());
        assertEquals(List.of(true, false), transactionEnds);
        assertEquals(Optional.empty(), ledgerRow(business("order-3-again")));
        assertEquals(ClaimState.DONE, forgetful.claim(key.storeKey(), "later", key.fingerprint(), settings.lease()).state());
        assertEquals(List.of(event(Outcome.PROCESSED, Layer.NONE, key), event(Outcome.DUPLICATE, Layer.LEDGER, key)),
                listener.outcomes);
        assertEquals(List.of(LedgerDecision.INSERTED, LedgerDecision.DUPLICATE), listener.decisions);
    }

    @Test
    void ledgerConflictRefusesTheMessageAndReleasesTheClaim() throws Exception {
        engine = engine(store, ScriptedLedger.answering(LedgerDecision.CONFLICT));
        MessageView m = message("{\"order\":4}");
        MessageKey key = keyOf(settings, m);

        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> guard(settings, m, businessWrite("order-4")));

        assertEquals(Outcome.CONFLICT, e.outcome());
        assertEquals(consumer, e.consumer());
        assertEquals(key.digest(), e.keyDigest());
        assertEquals(0, runs.get());
        assertEquals(List.of(false), transactionEnds);
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "later", key.fingerprint(), settings.lease()).state(), "claim released");
        assertEquals(List.of(Outcome.CONFLICT), outcomes());
        assertEquals(Layer.LEDGER, listener.outcomes.get(0).layer());
    }

    /** The same business key with another body, after the claim store forgot the first: the real ledger's CONFLICT. */
    @Test
    void sameKeyWithAnotherBodyIsAConflictInTheRealLedger() throws Exception {
        ConsumerSettings byOrder = Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/order");
        MessageView first = message("{\"order\":\"o-5\",\"qty\":1}");
        MessageKey key = keyOf(byOrder, first);
        guard(byOrder, first, businessWrite("order-5"));

        InMemoryClaimStore forgetful = new InMemoryClaimStore(10_000, clock);
        engine = engine(forgetful, jpaLedger);
        MessageRefusedException e = assertThrows(MessageRefusedException.class,
                () -> guard(byOrder, message("{\"order\":\"o-5\",\"qty\":9}"), businessWrite("order-5-changed")));

        assertEquals(Outcome.CONFLICT, e.outcome());
        assertEquals(1, runs.get());
        assertEquals(key.comparedHashHex(), ledgerRow(key.storeKey()).orElseThrow().bodySha256(), "the first body's row stays");
        assertEquals(Optional.empty(), ledgerRow(business("order-5-changed")));
        assertEquals(ClaimState.ACQUIRED, forgetful.claim(key.storeKey(), "later", key.fingerprint(), byOrder.lease()).state(), "claim released");
        assertEquals(List.of(Outcome.PROCESSED, Outcome.CONFLICT), outcomes());
        assertEquals(Layer.LEDGER, listener.outcomes.get(1).layer());
    }

    /**
     * What a copy is compared on is one value for every layer: with conflict-fields, the claim store
     * (in memory, the database's, Redis) and then the ledger's verifier, once the store forgot the
     * key, take the same copies for duplicates and the same for conflicts.
     */
    @Test
    void everyLayerComparesTheConflictFieldsAlike() throws Exception {
        ConsumerSettings byOrder = Settings.withConflict(Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/order"),
                ConflictPolicy.STRICT, "/sku", "/qty");
        KeyDeriver keys = new KeyDeriver(TestRedis.uniquePrefix("conflict-fields"));
        try (ScratchDatabase claims = ScratchDatabase.create(ScratchDatabase.Kind.H2, true);
             RedisClaimStore redis = new RedisClaimStore(TestRedis.client());
             JdbcClaimStore database = new JdbcClaimStore(claims.pool(4), claims.tables().claims(), clock, scheduler, Duration.ofHours(1))) {
            for (ClaimStore claimStore : List.of(store, database, redis)) {
                listener.outcomes.clear();
                String order = "o-" + claimStore.name();
                MessageView first = message("{\"order\":\"" + order + "\",\"sku\":\"w\",\"qty\":2,\"at\":\"10:00\"}");
                MessageView resent = message("{\"at\":\"10:09\", \"qty\":2, \"sku\":\"w\", \"order\":\"" + order + "\"}");
                MessageView changed = message("{\"order\":\"" + order + "\",\"sku\":\"w\",\"qty\":3,\"at\":\"10:00\"}");
                MessageKey key = keys.derive(byOrder, first, null);
                try {
                    engine = new GuardEngine(claimStore, transactions, jpaLedger, scheduler, listener, keys);
                    guard(byOrder, first, businessWrite(order));
                    assertNull(guard(byOrder, resent, businessWrite(order + "-resent")));
                    assertThrows(MessageRefusedException.class, () -> guard(byOrder, changed, businessWrite(order + "-changed")));

                    // A store that forgot the key, for each copy: the ledger's DUPLICATE marks it done again.
                    engine = new GuardEngine(new InMemoryClaimStore(10_000, clock), transactions, jpaLedger, scheduler, listener, keys);
                    assertNull(guard(byOrder, resent, businessWrite(order + "-resent")));
                    engine = new GuardEngine(new InMemoryClaimStore(10_000, clock), transactions, jpaLedger, scheduler, listener, keys);
                    assertThrows(MessageRefusedException.class, () -> guard(byOrder, changed, businessWrite(order + "-changed")));

                    assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.CONFLICT, Outcome.DUPLICATE, Outcome.CONFLICT),
                            outcomes(), claimStore.name());
                    assertEquals(List.of(Layer.NONE, Layer.CLAIM_STORE, Layer.CLAIM_STORE, Layer.LEDGER, Layer.LEDGER),
                            listener.outcomes.stream().map(GuardEvent::layer).toList(), claimStore.name());
                    assertEquals(key.comparedHashHex(), ledgerRow(key.storeKey()).orElseThrow().bodySha256());
                    ClaimResult stored = claimStore.claim(key.storeKey(), "probe", "", byOrder.lease());
                    assertEquals(ClaimResult.done(key.fingerprint()), stored, claimStore.name());
                    assertTrue(key.comparedHashHex().startsWith(HexFormat.of().formatHex(Base64.getUrlDecoder().decode(stored.fingerprint()))),
                            "the claim's fingerprint is the start of the ledger's hash");
                } finally {
                    try (var client = TestRedis.client()) {
                        client.del(key.storeKey());
                    }
                }
            }
        }
        assertEquals(3, runs.get(), "once per store");
    }

    /** conflict=ignore: the claim store and the ledger both take another body for a duplicate; the row stores no hash. */
    @Test
    void underConflictIgnoreEveryLayerTakesAnotherBodyForADuplicate() throws Exception {
        ConsumerSettings byOrder = Settings.withConflict(Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/order"),
                ConflictPolicy.IGNORE);
        MessageView first = message("{\"order\":\"o-ignore\",\"qty\":1}");
        MessageView changed = message("{\"order\":\"o-ignore\",\"qty\":7}");
        MessageKey key = keyOf(byOrder, first);
        guard(byOrder, first, businessWrite("o-ignore"));
        assertNull(guard(byOrder, changed, businessWrite("o-ignore-changed")));
        engine = engine(new InMemoryClaimStore(10_000, clock), jpaLedger);
        assertNull(guard(byOrder, changed, businessWrite("o-ignore-changed")));

        assertEquals(1, runs.get());
        assertEquals(List.of(event(Outcome.PROCESSED, Layer.NONE, key), event(Outcome.DUPLICATE, Layer.CLAIM_STORE, key),
                event(Outcome.DUPLICATE, Layer.LEDGER, key)), listener.outcomes);
        assertEquals("", ledgerRow(key.storeKey()).orElseThrow().bodySha256());
    }

    @Test
    void ledgerRetryRefusesTheMessageAndReleasesTheClaim() throws Exception {
        engine = engine(store, ScriptedLedger.answering(LedgerDecision.RETRY));
        MessageView m = message("{\"order\":6}");
        MessageKey key = keyOf(settings, m);

        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> guard(settings, m, businessWrite("order-6")));

        assertEquals(Outcome.RETRY, e.outcome());
        assertEquals(0, runs.get());
        assertEquals(List.of(false), transactionEnds);
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "later", key.fingerprint(), settings.lease()).state(), "claim released");
        assertEquals(List.of(Outcome.RETRY), outcomes());
        assertEquals(Layer.LEDGER, listener.outcomes.get(0).layer());
        assertEquals(List.of(LedgerDecision.RETRY), listener.decisions);
    }

    // ---- claim store down ----

    @Test
    void storeDownUnderLedgerOnlyRunsTheHandlerGuardedByTheLedgerAlone() throws Exception {
        engine = engine(new DownStore(), jpaLedger);
        ConsumerSettings ledgerOnly = Settings.withStoreFailure(settings, StoreFailurePolicy.LEDGER_ONLY);
        MessageView m = message("{\"order\":7}");
        MessageKey key = keyOf(ledgerOnly, m);

        assertEquals("ran-1", guard(ledgerOnly, m, businessWrite("order-7")));
        assertNull(guard(ledgerOnly, m, businessWrite("order-7-again")), "the ledger alone stops the redelivery");

        assertEquals(1, runs.get());
        assertEquals(List.of(true, false), transactionEnds);
        assertEquals(key.comparedHashHex(), ledgerRow(key.storeKey()).orElseThrow().bodySha256());
        assertTrue(ledgerRow(business("order-7")).isPresent());
        assertEquals(Optional.empty(), ledgerRow(business("order-7-again")));
        assertEquals(List.of(event(Outcome.PROCESSED, Layer.NONE, key), event(Outcome.DUPLICATE, Layer.LEDGER, key)),
                listener.outcomes);
        assertEquals(List.of("claim", "claim"), listener.storeErrors);
    }

    @Test
    void storeDownUnderRejectIsRetryWithoutRunning() throws Exception {
        engine = engine(new DownStore(), jpaLedger);
        MessageView m = message("{\"order\":8}");
        MessageKey key = keyOf(settings, m);

        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> guard(settings, m, businessWrite("order-8")));

        assertEquals(Outcome.RETRY, e.outcome());
        assertTrue(e.getCause() instanceof ClaimStoreException, String.valueOf(e.getCause()));
        assertEquals(0, runs.get());
        assertEquals(List.of(), transactionEnds, "no transaction begun");
        assertEquals(Optional.empty(), ledgerRow(key.storeKey()));
        assertEquals(List.of(Outcome.RETRY), outcomes());
        assertEquals(Layer.CLAIM_STORE, listener.outcomes.get(0).layer());
        assertEquals(List.of("claim"), listener.storeErrors);
    }

    // ---- claim store suspended by the application ----

    @Test
    void suspendedStoreUnderLedgerOnlyIsNeverAskedAndTheLedgerAloneGuards() throws Exception {
        ConsumerSettings ledgerOnly = Settings.withStoreFailure(settings, StoreFailurePolicy.LEDGER_ONLY);
        MessageView m = message("{\"order\":17}");
        MessageKey key = keyOf(ledgerOnly, m);
        engine.suspend();
        assertTrue(engine.suspended());

        assertEquals("ran-1", guard(ledgerOnly, m, businessWrite("order-17")));
        assertNull(guard(ledgerOnly, m, businessWrite("order-17-again")), "the ledger alone stops the redelivery");

        assertEquals(1, runs.get());
        assertEquals(List.of(event(Outcome.PROCESSED, Layer.NONE, key), event(Outcome.DUPLICATE, Layer.LEDGER, key)),
                listener.outcomes);
        assertEquals(List.of(), listener.storeErrors, "a suspension is not a store error");
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "probe", key.fingerprint(), settings.lease()).state(),
                "nothing was written to the suspended store");

        engine.resume();
        assertFalse(engine.suspended());
        MessageView next = message("{\"order\":18}");
        MessageKey nextKey = keyOf(ledgerOnly, next);
        assertEquals("ran-2", guard(ledgerOnly, next, businessWrite("order-18")));
        assertEquals(ClaimState.DONE, store.claim(nextKey.storeKey(), "probe", nextKey.fingerprint(), settings.lease()).state(),
                "resumed: the claim store is used again");
    }

    @Test
    void suspendedStoreUnderRejectIsRetryWithoutRunning() throws Exception {
        MessageView m = message("{\"order\":19}");
        MessageKey key = keyOf(settings, m);
        engine.suspend();
        engine.suspend(); // twice changes nothing

        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> guard(settings, m, businessWrite("order-19")));

        assertEquals(Outcome.RETRY, e.outcome());
        assertEquals(0, runs.get());
        assertEquals(List.of(), transactionEnds, "no transaction begun");
        assertEquals(Optional.empty(), ledgerRow(key.storeKey()));
        assertEquals(Layer.CLAIM_STORE, listener.outcomes.get(0).layer());
        assertEquals(List.of(), listener.storeErrors);
    }

    // ---- failures inside the transaction ----

    @Test
    void handlerThatThrowsRollsBackTheLedgerRowAndReleasesTheClaim() throws Exception {
        MessageView m = message("{\"order\":9}");
        MessageKey key = keyOf(settings, m);
        IOException boom = new IOException("shipping service down");

        IOException thrown = assertThrows(IOException.class, () -> guard(settings, m, () -> {
            businessWrite("order-9").call();
            throw boom;
        }));

        assertSame(boom, thrown, "the handler's own exception reaches the caller");
        assertEquals(List.of(false), transactionEnds);
        assertEquals(Optional.empty(), ledgerRow(key.storeKey()), "the ledger row did not commit");
        assertEquals(Optional.empty(), ledgerRow(business("order-9")), "nor the business write");
        assertEquals(List.of(Outcome.FAILED), outcomes());
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "probe", key.fingerprint(), settings.lease()).state(), "claim released");
        store.release(key.storeKey(), "probe");

        assertEquals("ran-2", guard(settings, m, businessWrite("order-9")), "the redelivery runs");
        assertEquals(List.of(Outcome.FAILED, Outcome.PROCESSED), outcomes());
        assertTrue(ledgerRow(key.storeKey()).isPresent());
    }

    /**
     * A failure not worth retrying changes nothing in the guard's invariants: the transaction rolls
     * back with the ledger row and the business write, the claim is released; only the report says
     * "do not retry".
     */
    @Test
    void aFailureNotWorthRetryingRollsBackAndReleasesLikeAnyFailure() throws Exception {
        MessageView m = message("{\"order\":\"abc\"}");
        MessageKey key = keyOf(settings, m);

        assertThrows(NumberFormatException.class, () -> guard(settings, m, () -> {
            businessWrite("order-abc").call();
            throw new NumberFormatException("For input string: \"abc\"");
        }));

        assertEquals(List.of(false), transactionEnds);
        assertEquals(Optional.empty(), ledgerRow(key.storeKey()), "the ledger row did not commit");
        assertEquals(Optional.empty(), ledgerRow(business("order-abc")), "nor the business write");
        assertEquals(ClaimState.ACQUIRED, claimState(key), "claim released");
        GuardEvent failed = listener.outcomes.get(0);
        assertEquals(Outcome.FAILED, failed.outcome());
        assertFalse(failed.retryable());
    }

    /**
     * Inside a caller's transaction the report comes when that transaction completes, after the
     * guard rethrew: the handler's exception, recorded when it was thrown, still decides.
     */
    @Test
    void aFailureNotWorthRetryingInsideTheCallersTransactionIsReportedWhenItRollsBack() throws Exception {
        MessageView m = message("{\"order\":\"joined-abc\"}");
        jta.begin();
        try {
            assertThrows(IllegalArgumentException.class, () -> guard(settings, m, () -> {
                throw new IllegalArgumentException("quantity must be positive");
            }));
            assertEquals(List.of(), listener.outcomes, "not reported before the caller's transaction completes");
            assertEquals(Status.STATUS_MARKED_ROLLBACK, jta.getStatus());
        } finally {
            jta.rollback();
        }
        assertEquals(Outcome.FAILED, listener.outcomes.get(0).outcome());
        assertFalse(listener.outcomes.get(0).retryable());
    }

    @Test
    void ledgerInsertThatFailsRollsBackAndReleasesTheClaimWithoutRunningTheHandler() throws Exception {
        PersistenceException lost = new PersistenceException("connection to the database lost");
        ScriptedLedger failing = ScriptedLedger.throwing(lost);
        engine = engine(store, failing);
        MessageView m = message("{\"order\":10}");
        MessageKey key = keyOf(settings, m);

        PersistenceException thrown = assertThrows(PersistenceException.class, () -> guard(settings, m, businessWrite("order-10")));

        assertSame(lost, thrown);
        assertEquals(1, failing.inserts.get(), "the ledger was asked");
        assertEquals(0, runs.get(), "handler not run");
        assertEquals(List.of(false), transactionEnds, "the transaction rolled back");
        assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "later", key.fingerprint(), settings.lease()).state(), "claim released");
        assertEquals(List.of(Outcome.FAILED), outcomes());
        assertEquals(List.of(), listener.decisions, "no decision was taken");
    }

    // ---- the done marker after the acknowledgement ----

    /**
     * With the ledger on, the decision is reported (and the delivery settled) before the done marker
     * is written; markers that queue up while one batch is on its way go out together in the next.
     */
    @Test
    void aMessageIsSettledBeforeItsDoneMarkerIsWrittenAndMarkersQueuedMeanwhileGoInOneBatch() throws Exception {
        HeldCompletions held = new HeldCompletions(store);
        engine = engine(held, jpaLedger);
        List<MessageKey> keys = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            MessageView m = message("{\"order\":\"batch-" + i + "\"}");
            keys.add(keyOf(settings, m));
            Guarded.call(engine, settings, Dispatch.of(m), null, businessWrite("batch-" + i));
            if (i == 0) {
                assertTrue(held.firstBatchStarted.await(5, TimeUnit.SECONDS), "the first marker is on its way");
            }
        }

        assertEquals(Collections.nCopies(6, Outcome.PROCESSED), outcomes(), "all reported before any marker was written");
        for (MessageKey key : keys) {
            assertEquals(ClaimState.IN_PROGRESS, claimState(key), "not marked done yet");
        }
        held.gate.countDown();
        awaitFinished(engine);
        assertEquals(List.of(1, 5), held.batches, "the five queued behind the first went in one batch");
        for (MessageKey key : keys) {
            assertEquals(ClaimState.DONE, claimState(key));
        }
        assertEquals(6, runs.get());
    }

    /**
     * What docs/guarantees.md says happens when an instance dies between the acknowledgement and the done
     * marker: a copy meets the claim in progress (BUSY, not an attempt) until the lease ends, then
     * claims it and is stopped by the ledger's row. The effect stays single.
     */
    @Test
    void aDoneMarkerLostWithItsInstanceLeavesCopiesBusyUntilTheLeaseEndsThenToTheLedger() throws Exception {
        HeldCompletions dying = new HeldCompletions(store); // its marker never goes out while the test looks
        ScheduledExecutorService itsScheduler = Executors.newSingleThreadScheduledExecutor();
        GuardEngine first = new GuardEngine(dying, transactions, jpaLedger, itsScheduler, listener, new KeyDeriver("oo:"));
        MessageView m = message("{\"order\":\"dies\"}");
        MessageKey key = keyOf(settings, m);
        Guarded.call(first, settings, Dispatch.of(m), null, businessWrite("dies"));
        assertTrue(dying.firstBatchStarted.await(5, TimeUnit.SECONDS));

        engine = engine(store, jpaLedger); // another instance, the same store
        MessageRefusedException busy = assertThrows(MessageRefusedException.class, () -> guard(settings, m, businessWrite("dies-again")));
        assertEquals(Outcome.BUSY, busy.outcome());
        clock.advance(settings.lease().plusMillis(1));
        assertNull(guard(settings, m, businessWrite("dies-again")));

        assertEquals(1, runs.get(), "one effect");
        assertEquals(Optional.empty(), ledgerRow(business("dies-again")));
        assertEquals(List.of(Outcome.PROCESSED, Outcome.BUSY, Outcome.DUPLICATE), outcomes());
        assertEquals(Layer.LEDGER, listener.outcomes.get(2).layer());
        assertEquals(ClaimState.DONE, claimState(key), "marked done by the instance that met the ledger's row");
        dying.gate.countDown(); // the late marker finds the key done by the other instance and changes nothing
        awaitFinished(first);
        itsScheduler.shutdownNow();
        assertEquals(ClaimState.DONE, claimState(key));
    }

    /** Stopping writes the marks still queued, even when the executor no longer runs the drain. */
    @Test
    void closingWritesTheDoneMarksTheExecutorDidNotGetTo() throws Exception {
        try (HeldScheduler stuck = new HeldScheduler()) {
            GuardEngine stopping = new GuardEngine(store, transactions, jpaLedger, stuck.executor, listener, new KeyDeriver("oo:"));
            MessageView m = message("{\"order\":\"at-shutdown\"}");
            Guarded.call(stopping, settings, Dispatch.of(m), null, businessWrite("at-shutdown"));
            assertEquals(ClaimState.IN_PROGRESS, claimState(keyOf(settings, m)), "the drain never ran");

            assertEquals(0, stopping.close(Duration.ofSeconds(5)), "nothing left unfinished");
            assertEquals(ClaimState.DONE, claimState(keyOf(settings, m)));
        }
    }

    /**
     * With a store that sends completions in a claim's round trip, the done marks queued when the
     * next message is claimed go with that claim, ahead of it: no batch of their own, and a copy
     * right behind its original finds it done (DUPLICATE), not in progress (BUSY). The executor's
     * drain never runs here, so only the claims can have written them.
     */
    @Test
    void theNextClaimCarriesTheDoneMarksQueuedBeforeIt() throws Exception {
        HeldCompletions carrying = new HeldCompletions(store, true);
        try (HeldScheduler stuck = new HeldScheduler()) {
            engine = new GuardEngine(carrying, transactions, jpaLedger, stuck.executor, listener, new KeyDeriver("oo:"));
            MessageView first = message("{\"order\":\"carried-1\"}");
            MessageView second = message("{\"order\":\"carried-2\"}");
            Guarded.call(engine, settings, Dispatch.of(first), null, businessWrite("carried-1"));
            assertEquals(ClaimState.IN_PROGRESS, claimState(keyOf(settings, first)), "queued, not written");

            long[] fence = {0};
            Guarded.call(engine, settings, Dispatch.of(second), null, () -> {
                fence[0] = dev.onceonly.internal.support.CurrentKey.fence();
                return businessWrite("carried-2").call();
            });
            assertEquals(ClaimState.DONE, claimState(keyOf(settings, first)), "written with the second message's claim");
            assertTrue(fence[0] > 0, "the claim that carried the mark brought the store's fence to its handler: " + fence[0]);
            assertNull(Guarded.call(engine, settings, Dispatch.of(second), null, businessWrite("carried-2-again")),
                    "the copy's claim carried its original's mark ahead of itself");

            assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.DUPLICATE), outcomes());
            assertEquals(Layer.CLAIM_STORE, listener.outcomes.get(2).layer());
            assertEquals(List.of("1+1", "1+1"), carrying.carried, "one mark ahead of each claim");
            assertEquals(List.of(), carrying.batches, "no batch of their own");
            assertEquals(2, runs.get());
            assertEquals(0, engine.inFlight(), "every call finished, its mark written");
        }
    }

    /**
     * A claim carries at most {@link DoneWriter#MAX_CARRIED} marks (each adds to the round trip its
     * thread waits for): 21 marks queued by messages claimed ahead (no claim of their own) go with
     * the next two claims, 16 and then the rest.
     */
    @Test
    void aClaimCarriesAtMostSixteenMarks() throws Exception {
        HeldCompletions carrying = new HeldCompletions(store, true);
        try (HeldScheduler stuck = new HeldScheduler()) {
            engine = new GuardEngine(carrying, transactions, jpaLedger, stuck.executor, listener, new KeyDeriver("oo:"));
            RecordingDispatch first = new RecordingDispatch(message("{\"order\":\"ahead-0\"}"));
            List<RecordingDispatch> behind = new ArrayList<>();
            for (int i = 1; i <= 20; i++) {
                behind.add(new RecordingDispatch(message("{\"order\":\"ahead-" + i + "\"}")));
            }
            first.offerBehind(behind.toArray(RecordingDispatch[]::new));
            Guarded.call(engine, settings, first, null, businessWrite("ahead-0"));
            for (int i = 0; i < behind.size(); i++) {
                Guarded.call(engine, settings, behind.get(i), null, businessWrite("ahead-" + (i + 1)));
            }
            assertEquals(21, engine.inFlight(), "21 marks queued");

            Guarded.call(engine, settings, Dispatch.of(message("{\"order\":\"carrier-1\"}")), null, businessWrite("carrier-1"));
            Guarded.call(engine, settings, Dispatch.of(message("{\"order\":\"carrier-2\"}")), null, businessWrite("carrier-2"));

            assertEquals(List.of("16+1", "6+1"), carrying.carried, "16, then the other 5 and the first carrier's own");
            assertEquals(1, engine.inFlight(), "only the last carrier's own mark is left");
            assertEquals(ClaimState.DONE, claimState(keyOf(settings, behind.get(19).message())));
        }
    }

    /**
     * When the claim that carries done marks fails, the marks go to the lease sweep's retry (as a
     * failed batch's do) and the claim to the consumer's store-failure policy; nothing is left
     * in progress once the store answers again.
     */
    @Test
    void doneMarksWhoseCarryingClaimFailedAreWrittenByTheSweep() throws Exception {
        HeldCompletions failingOnce = new HeldCompletions(store, true);
        failingOnce.failNext.set(true);
        // Neither the drain nor the sweep runs before the carrying claim failed.
        try (HeldScheduler held = new HeldScheduler()) {
            engine = new GuardEngine(failingOnce, transactions, jpaLedger, held.executor, listener, new KeyDeriver("oo:"));
            ConsumerSettings shortLease = Settings.withStoreFailure(Settings.withLease(settings, Duration.ofSeconds(3)),
                    StoreFailurePolicy.REJECT); // the sweep every 500 ms
            MessageView first = message("{\"order\":\"carry-fails-1\"}");
            MessageView second = message("{\"order\":\"carry-fails-2\"}");
            Guarded.call(engine, shortLease, Dispatch.of(first), null, businessWrite("carry-fails-1"));
            MessageRefusedException refused = assertThrows(MessageRefusedException.class,
                    () -> Guarded.call(engine, shortLease, Dispatch.of(second), null, businessWrite("carry-fails-2")));
            assertEquals(Outcome.RETRY, refused.outcome(), "the claim failed: the store-failure policy");
            assertEquals(List.of("complete", "claim"), listener.storeErrors);
            assertEquals(ClaimState.IN_PROGRESS, claimState(keyOf(shortLease, first)));

            held.release();
            awaitFinished(engine);
            assertEquals(ClaimState.DONE, claimState(keyOf(shortLease, first)), "written by the sweep");
            assertEquals(ClaimState.ACQUIRED, claimState(keyOf(shortLease, second)), "the refused message holds nothing");
            assertEquals(List.of(), failingOnce.batches, "the drain found nothing left to write");
            assertEquals(1, runs.get());
        }
    }

    /** A batch of markers the store could not take is written by the lease sweep once it answers. */
    @Test
    void aBatchOfDoneMarkersTheStoreRefusedIsWrittenByTheSweep() throws Exception {
        HeldCompletions failingOnce = new HeldCompletions(store);
        failingOnce.gate.countDown();
        failingOnce.failNext.set(true);
        engine = engine(failingOnce, jpaLedger);
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofSeconds(3)); // the sweep every 500 ms
        MessageView m = message("{\"order\":\"refused-marker\"}");

        guard(shortLease, m, businessWrite("refused-marker"));

        assertEquals(List.of(Outcome.PROCESSED), outcomes());
        assertEquals(List.of("complete"), listener.storeErrors);
        assertEquals(List.of(1), failingOnce.batches, "one batch, refused; the retry is a single completion");
        assertEquals(ClaimState.DONE, claimState(keyOf(shortLease, m)));
    }

    // ---- helpers ----

    /**
     * The one call of {@link GuardEngine#guard} in this class. With the ledger on, the done marker is
     * written after the guard returned ({@link DoneWriter}): when the call's own transaction ended,
     * this waits for it, so that each test sees the state the next copy of a message would meet.
     */
    private <T> T guard(ConsumerSettings s, MessageView m, TransactionRunner.Work<T> handler) throws Exception {
        try {
            return Guarded.call(engine, s, Dispatch.of(m), null, handler);
        } finally {
            if (jta.getStatus() == Status.STATUS_NO_TRANSACTION) {
                awaitFinished(engine);
            }
        }
    }

    private static void awaitFinished(GuardEngine engine) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (engine.inFlight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(0, engine.inFlight(), "every guarded call finished, its done marker written");
    }

    private MessageKey keyOf(ConsumerSettings s, MessageView m) {
        return new KeyDeriver("oo:").derive(s, m, null);
    }

    private GuardEngine engine(ClaimStore claimStore, Ledger ledger) {
        return new GuardEngine(claimStore, transactions, ledger, scheduler, listener, new KeyDeriver("oo:"));
    }

    private static MessageView message(String body) {
        return MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    /** A handler whose business effect is a row in the same transaction, under a key of its own. */
    private TransactionRunner.Work<String> businessWrite(String id) {
        return () -> {
            em.persist(new ProcessedMessage(business(id), consumer, "0".repeat(64), Instant.now()));
            em.flush();
            return "ran-" + runs.incrementAndGet();
        };
    }

    private String business(String id) {
        return "business:" + consumer + ":" + id;
    }

    /** The committed ledger row of {@code key}, read in a transaction of its own. */
    private static Optional<ProcessedMessage> ledgerRow(String key) {
        return Optional.ofNullable(jta.call(() -> em.find(ProcessedMessage.class, key)));
    }

    /** The key's state in the store, probed with a claim that is given back when it acquired. */
    private ClaimState claimState(MessageKey key) {
        ClaimState state = store.claim(key.storeKey(), "probe", key.fingerprint(), Duration.ofSeconds(1)).state();
        if (state == ClaimState.ACQUIRED) {
            store.release(key.storeKey(), "probe");
        }
        return state;
    }

    private List<Outcome> outcomes() {
        return listener.outcomes.stream().map(GuardEvent::outcome).toList();
    }

    /** The event expected for {@code key} (one without a reason), compared without its timing. */
    private GuardEvent event(Outcome outcome, Layer layer, MessageKey key) {
        return new GuardEvent(consumer, outcome, layer, key.digest(), "", 0);
    }

    /** Records what the listener is told; events are kept without their timing, for comparison. */
    private static final class Recorder implements GuardListener {
        final List<GuardEvent> outcomes = new CopyOnWriteArrayList<>();
        final List<LedgerDecision> decisions = new CopyOnWriteArrayList<>();
        final List<String> storeErrors = new CopyOnWriteArrayList<>();
        final List<String> leasesLost = new CopyOnWriteArrayList<>();

        @Override
        public void onLeaseLost(String consumer) {
            leasesLost.add(consumer);
        }

        @Override
        public void onOutcome(GuardEvent e) {
            outcomes.add(new GuardEvent(e.consumer(), e.outcome(), e.layer(), e.keyDigest(), e.reason(), 0, e.retryable()));
        }

        @Override
        public void onLedgerDecision(String consumer, LedgerDecision decision) {
            decisions.add(decision);
        }

        @Override
        public void onStoreError(String consumer, String operation) {
            storeErrors.add(operation);
        }
    }

    /** A ledger that answers one chosen decision to every insert, or throws. */
    static class ScriptedLedger implements Ledger {
        final AtomicInteger inserts = new AtomicInteger();
        private final LedgerDecision answer;
        private final RuntimeException failure;

        ScriptedLedger(LedgerDecision answer, RuntimeException failure) {
            this.answer = answer;
            this.failure = failure;
        }

        static ScriptedLedger answering(LedgerDecision decision) {
            return new ScriptedLedger(decision, null);
        }

        static ScriptedLedger throwing(RuntimeException failure) {
            return new ScriptedLedger(null, failure);
        }

        @Override
        public LedgerDecision insert(String key, String consumer, String bodyHash) {
            inserts.incrementAndGet();
            if (failure != null) {
                throw failure;
            }
            return answer;
        }

        @Override
        public void checkReady() {
        }

        @Override
        public long purge(Instant olderThan, int batchSize) {
            return 0;
        }
    }

    /**
     * The in-memory store, with {@link #completeAll} held at {@link #gate} (its first call says so on
     * {@link #firstBatchStarted}), recording each batch's size, and refusing the next batch when
     * {@link #failNext} is set. When it {@link #carries} completions with claims, each
     * {@link #completeThenClaim} is recorded as "completions+claims" and refused as a batch is.
     */
    private static final class HeldCompletions extends ForwardingClaimStore implements BatchClaimStore {
        final CountDownLatch gate = new CountDownLatch(1);
        final CountDownLatch firstBatchStarted = new CountDownLatch(1);
        final AtomicBoolean failNext = new AtomicBoolean();
        final List<Integer> batches = new CopyOnWriteArrayList<>();
        final List<String> carried = new CopyOnWriteArrayList<>();
        private final boolean carries;

        HeldCompletions(ClaimStore store) {
            this(store, false);
        }

        HeldCompletions(ClaimStore store, boolean carries) {
            super(store);
            this.carries = carries;
        }

        @Override
        public List<HolderResult> completeAll(List<CompleteRequest> requests) {
            batches.add(requests.size());
            firstBatchStarted.countDown();
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ClaimStoreException("held", "complete", e);
            }
            if (failNext.getAndSet(false)) {
                throw new ClaimStoreException("held", "complete", new IOException("connection reset"));
            }
            return BatchClaimStore.looping(store).completeAll(requests);
        }

        @Override
        public boolean completesWithClaims() {
            return carries;
        }

        @Override
        public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
            carried.add(completions.size() + "+" + claims.size());
            if (failNext.getAndSet(false)) {
                throw new ClaimStoreException("held", "claim", new IOException("connection reset"));
            }
            return BatchClaimStore.looping(store).completeThenClaim(completions, claims);
        }

        @Override
        public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
            return BatchClaimStore.looping(this).claimAll(requests);
        }

        @Override
        public String name() {
            return "held";
        }

        @Override
        public Optional<String> problem() {
            return Optional.empty();
        }

        @Override
        public void close() {
        }
    }

    /** A single-thread scheduler whose thread is held until {@link #release}: nothing scheduled on it runs before. */
    private static final class HeldScheduler implements AutoCloseable {
        final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
        private final CountDownLatch held = new CountDownLatch(1);

        HeldScheduler() {
            executor.execute(() -> {
                try {
                    held.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }

        void release() {
            held.countDown();
        }

        @Override
        public void close() {
            held.countDown();
            executor.shutdownNow();
        }
    }

    /** A claim store that cannot be reached: every call throws {@link ClaimStoreException}. */
    private static final class DownStore implements ClaimStore {

        private static ClaimStoreException down(String operation) {
            return new ClaimStoreException("down", operation, new IOException("connection refused"));
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            throw down("claim");
        }

        @Override
        public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
            throw down("complete");
        }

        @Override
        public HolderResult release(String key, String token) {
            throw down("release");
        }

        @Override
        public HolderResult extend(String key, String token, Duration lease) {
            throw down("extend");
        }

        @Override
        public String name() {
            return "down";
        }

        @Override
        public Optional<String> problem() {
            return Optional.of("connection refused");
        }

        @Override
        public void close() {
        }
    }
}
