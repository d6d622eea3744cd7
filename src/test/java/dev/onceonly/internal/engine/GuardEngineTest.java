package dev.onceonly.internal.engine;

import dev.onceonly.testing.Guarded;
import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.internal.redis.RedisSettings;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The guard flow on the in-memory store, with a clock the test moves. */
class GuardEngineTest {

    private final KeyDeriver keys = new KeyDeriver("oo:");
    private final MutableClock clock = new MutableClock();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<GuardEvent> events = new CopyOnWriteArrayList<>();
    private InMemoryClaimStore store = new InMemoryClaimStore(10_000, clock);
    private GuardEngine engine = engineOn(store);
    private final ConsumerSettings settings = Settings.defaults("orders", KeyStrategy.CONTENT);
    private final AtomicInteger runs = new AtomicInteger();

    private GuardEngine engineOn(dev.onceonly.spi.ClaimStore s) {
        return new GuardEngine(s, TransactionRunner.NONE, null, scheduler, events::add, keys);
    }

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private static MessageView view(String body) {
        return MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    private static Dispatch message(String body) {
        return Dispatch.of(view(body));
    }

    private String handle(ConsumerSettings s, Dispatch m) throws Exception {
        return Guarded.call(engine, s, m, null, () -> "ran-" + runs.incrementAndGet());
    }

    private List<Outcome> outcomes() {
        return events.stream().map(GuardEvent::outcome).toList();
    }

    @Test
    void secondDeliveryIsADuplicateAndTheHandlerRunsOnce() throws Exception {
        assertEquals("ran-1", handle(settings, message("{\"orderId\":1}")));
        assertNull(handle(settings, message("{\"orderId\":1}")));
        assertEquals(1, runs.get());
        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE), outcomes());
        assertEquals(Layer.CLAIM_STORE, events.get(1).layer());
        assertEquals(events.get(0).keyDigest(), events.get(1).keyDigest());
    }

    /** The decision reaches the delivery's own dispatch, once and before the guard returns or throws. */
    @Test
    void eachDecisionIsReportedToTheDispatchItWasMadeFor() throws Exception {
        RecordingDispatch first = new RecordingDispatch(view("d"));
        RecordingDispatch second = new RecordingDispatch(view("d"));
        handle(settings, first);
        assertNull(handle(settings, second));
        assertEquals(List.of(Outcome.PROCESSED), first.outcomes());
        assertEquals(List.of(Outcome.DUPLICATE), second.outcomes());
        RecordingDispatch failed = new RecordingDispatch(view("f"));
        assertThrows(IllegalStateException.class, () -> Guarded.call(engine, settings, failed, null, () -> {
            throw new IllegalStateException("boom");
        }));
        assertEquals(List.of(Outcome.FAILED), failed.outcomes());
        RecordingDispatch refused = new RecordingDispatch(view("b"));
        MessageKey key = keys.derive(settings, view("b"), null);
        store.claim(key.storeKey(), "other", key.fingerprint(), Duration.ofSeconds(30));
        assertThrows(MessageRefusedException.class, () -> handle(settings, refused));
        assertEquals(List.of(Outcome.BUSY), refused.outcomes());
        assertEquals(key.digest(), refused.decisions().get(0).keyDigest());
    }

    @Test
    void failingHandlerReleasesTheClaimSoTheRedeliveryRuns() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> Guarded.call(engine, settings, message("m"), null, () -> {
                    throw boom;
                }));
        assertSame(boom, thrown, "the handler's own exception reaches the caller");
        assertEquals("ran-1", handle(settings, message("m")));
        assertEquals(List.of(Outcome.FAILED, Outcome.PROCESSED), outcomes());
    }

    /** An application's exception for a message that can never succeed. */
    static class InvalidOrder extends RuntimeException {
        InvalidOrder(String message) {
            super(message);
        }
    }

    /**
     * A failure the consumer's rule says is not worth retrying: released and rethrown like any
     * failure, but reported FAILED with "do not retry" to the delivery and the listeners, the reason
     * naming the class (never the exception's message).
     */
    @Test
    void aFailureNotWorthRetryingIsReportedAsSuchAndReleasesTheClaim() throws Exception {
        ConsumerSettings noRetry = Settings.withRetry(settings, List.of(), List.of(InvalidOrder.class));
        RecordingDispatch delivery = new RecordingDispatch(view("bad-order"));
        InvalidOrder invalid = new InvalidOrder("quantity 'abc' of order o-1");
        InvalidOrder thrown = assertThrows(InvalidOrder.class, () -> Guarded.call(engine, noRetry, delivery, null, () -> {
            runs.incrementAndGet();
            throw invalid;
        }));

        assertSame(invalid, thrown, "the handler's own exception reaches the caller");
        GuardEvent decided = delivery.decisions().get(0);
        assertEquals(Outcome.FAILED, decided.outcome(), "still FAILED: no new outcome");
        assertFalse(decided.retryable());
        assertEquals("not retried: " + InvalidOrder.class.getName() + " is in no-retry-for", decided.reason());
        assertFalse(events.get(0).retryable(), "listeners (CDI event, metrics) see it too");
        assertEquals("ran-2", handle(noRetry, message("bad-order")), "the claim was released, as for any failure");
        assertEquals(List.of(Outcome.FAILED, Outcome.PROCESSED), outcomes());
    }

    /** Wrapped by a container or an interceptor, the failure is classified by the application's exception. */
    @Test
    void aWrappedFailureIsClassifiedByItsCause() {
        RecordingDispatch delivery = new RecordingDispatch(view("wrapped"));
        assertThrows(java.lang.reflect.UndeclaredThrowableException.class, () -> Guarded.call(engine, settings, delivery, null, () -> {
            throw new java.lang.reflect.UndeclaredThrowableException(new java.lang.reflect.InvocationTargetException(
                    new NumberFormatException("For input string: \"abc\"")));
        }));
        assertFalse(delivery.decisions().get(0).retryable(), "NumberFormatException: an IllegalArgumentException, a default");
        assertTrue(delivery.decisions().get(0).reason().endsWith("matches the default no-retry-for java.lang.IllegalArgumentException"),
                delivery.decisions().get(0).reason());
    }

    /** Every other failure stays retryable, as before; retry-for carves a class out of the defaults. */
    @Test
    void otherFailuresAreRetryable() {
        RecordingDispatch down = new RecordingDispatch(view("down"));
        assertThrows(IllegalStateException.class, () -> Guarded.call(engine, settings, down, null, () -> {
            throw new IllegalStateException("shipping answered HTTP 503");
        }));
        assertTrue(down.decisions().get(0).retryable());
        assertEquals("handler failed or transaction rolled back", down.decisions().get(0).reason());

        ConsumerSettings carvedOut = Settings.withRetry(settings, List.of(NumberFormatException.class), List.of());
        RecordingDispatch parse = new RecordingDispatch(view("parse"));
        assertThrows(NumberFormatException.class, () -> Guarded.call(engine, carvedOut, parse, null, () -> {
            throw new NumberFormatException("rate not published yet");
        }));
        assertTrue(parse.decisions().get(0).retryable());
    }

    /**
     * A refusal of another guarded call, thrown by the handler (also wrapped), keeps its outcome:
     * this message is BUSY (waits, no attempt spent) or CONFLICT (dead-lettered), however broad the
     * consumer's no-retry-for, and its claim is released. A passed-on DUPLICATE is a failure: the
     * handler's own work rolled back. Before, every passed-on refusal made the message FAILED.
     */
    @Test
    void aRefusalThrownByTheHandlerKeepsItsOutcome() throws Exception {
        ConsumerSettings broad = Settings.withRetry(settings, List.of(), List.of(RuntimeException.class));
        RecordingDispatch delivery = new RecordingDispatch(view("nested"));
        MessageRefusedException inner = new MessageRefusedException(Outcome.BUSY, "inner", "d", "busy", null);
        assertSame(inner, assertThrows(MessageRefusedException.class, () -> Guarded.call(engine, broad, delivery, null, () -> {
            throw inner;
        })));
        assertEquals(Outcome.BUSY, delivery.decisions().get(0).outcome());
        assertTrue(delivery.decisions().get(0).retryable());
        assertEquals("ran", Guarded.call(engine, broad, new RecordingDispatch(view("nested")), null, () -> "ran"), "claim released");

        RecordingDispatch conflicted = new RecordingDispatch(view("nested-conflict"));
        assertThrows(IllegalStateException.class, () -> Guarded.call(engine, broad, conflicted, null, () -> {
            throw new IllegalStateException("wrapped", new MessageRefusedException(Outcome.CONFLICT, "inner", "d", "other body", null));
        }));
        assertEquals(Outcome.CONFLICT, conflicted.decisions().get(0).outcome());
        assertFalse(conflicted.decisions().get(0).retryable());

        RecordingDispatch duplicate = new RecordingDispatch(view("nested-duplicate"));
        assertThrows(MessageRefusedException.class, () -> Guarded.call(engine, settings, duplicate, null, () -> {
            throw new MessageRefusedException(Outcome.DUPLICATE, "inner", "d", "in the caller's transaction", null);
        }));
        assertEquals(Outcome.FAILED, duplicate.decisions().get(0).outcome());
    }

    /** The guard's own refusals carry their retryability too: a permanent one may not be retried. */
    @Test
    void refusalsAreRetryableUnlessPermanent() throws Exception {
        ConsumerSettings byId = Settings.withKey(settings, KeyStrategy.MESSAGE_ID, false);
        RecordingDispatch noKey = new RecordingDispatch(view("no-id"));
        assertThrows(MessageRefusedException.class, () -> Guarded.call(engine, byId, noKey, null, () -> "never"));
        assertEquals(Outcome.REJECTED, noKey.decisions().get(0).outcome());
        assertFalse(noKey.decisions().get(0).retryable());

        MessageKey key = keys.derive(settings, view("held"), null);
        store.claim(key.storeKey(), "other", key.fingerprint(), Duration.ofSeconds(30));
        RecordingDispatch busy = new RecordingDispatch(view("held"));
        assertThrows(MessageRefusedException.class, () -> Guarded.call(engine, settings, busy, null, () -> "never"));
        assertTrue(busy.decisions().get(0).retryable());
        RecordingDispatch processed = new RecordingDispatch(view("fine"));
        handle(settings, processed);
        assertTrue(processed.decisions().get(0).retryable());
    }

    @Test
    void messageHeldByAnotherHolderIsBusyAndNotRun() throws Exception {
        MessageKey key = keys.derive(settings, view("m"), null);
        store.claim(key.storeKey(), "other-instance", key.fingerprint(), Duration.ofSeconds(30));
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> handle(settings, message("m")));
        assertEquals(Outcome.BUSY, e.outcome());
        assertEquals("orders", e.consumer());
        assertEquals(key.digest(), e.keyDigest());
        assertEquals(0, runs.get());
    }

    @Test
    void claimOfACrashedHolderExpiresAfterItsLease() throws Exception {
        MessageKey key = keys.derive(settings, view("m"), null);
        store.claim(key.storeKey(), "crashed", key.fingerprint(), settings.lease());
        assertEquals(Outcome.BUSY, assertThrows(MessageRefusedException.class, () -> handle(settings, message("m"))).outcome());
        clock.advance(settings.lease().plusSeconds(1));
        assertEquals("ran-1", handle(settings, message("m")));
        assertEquals(List.of(Outcome.BUSY, Outcome.PROCESSED), outcomes());
    }

    @Test
    void doneKeyIsForgottenAfterRetentionAndRunsAgain() throws Exception {
        handle(settings, message("m"));
        clock.advance(settings.retention().minusSeconds(1));
        assertNull(handle(settings, message("m")), "still retained");
        clock.advance(Duration.ofSeconds(2));
        assertEquals("ran-2", handle(settings, message("m")));
    }

    @Test
    void sameBusinessKeyWithAnotherBodyIsAConflict() throws Exception {
        ConsumerSettings byId = Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/orderId");
        handle(byId, message("{\"orderId\":\"o-1\",\"qty\":1}"));
        MessageRefusedException e = assertThrows(MessageRefusedException.class,
                () -> handle(byId, message("{\"orderId\":\"o-1\",\"qty\":5}")));
        assertEquals(Outcome.CONFLICT, e.outcome());
        assertEquals(1, runs.get());
        assertNull(handle(byId, message("{\"orderId\":\"o-1\",\"qty\":1}")), "the same body is still a plain duplicate");
    }

    /** conflict=ignore: the same key with any body is a duplicate, and the claim stores no fingerprint. */
    @Test
    void underConflictIgnoreAnotherBodyIsADuplicate() throws Exception {
        ConsumerSettings byId = Settings.withConflict(Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/orderId"),
                ConflictPolicy.IGNORE);
        assertEquals("ran-1", handle(byId, message("{\"orderId\":\"o-1\",\"qty\":1}")));
        assertNull(handle(byId, message("{\"orderId\":\"o-1\",\"qty\":5,\"at\":\"later\"}")));
        assertEquals(1, runs.get());
        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE), outcomes());
        MessageKey key = keys.derive(byId, view("{\"orderId\":\"o-1\"}"), null);
        assertEquals(ClaimResult.done(""), store.claim(key.storeKey(), "probe", "x", Duration.ofSeconds(1)));

        ConsumerSettings strict = Settings.withConflict(byId, ConflictPolicy.STRICT);
        handle(strict, message("{\"orderId\":\"o-2\",\"qty\":1}"));
        assertNull(handle(byId, message("{\"orderId\":\"o-2\",\"qty\":9}")), "a key processed before the switch to ignore too");
        assertEquals(2, runs.get());
    }

    /** conflict-fields: a re-serialised copy (other field order, a new timestamp) is a duplicate; another quantity is not. */
    @Test
    void conflictFieldsDecideBetweenDuplicateAndConflict() throws Exception {
        ConsumerSettings byId = Settings.withConflict(Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/orderId"),
                ConflictPolicy.STRICT, "/sku", "/quantity");
        assertEquals("ran-1", handle(byId, message("{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":2,\"at\":\"10:00\"}")));
        assertNull(handle(byId, message("{\"at\":\"10:07\",\"quantity\":2,\"orderId\":\"o-1\",\"sku\":\"w\"}")));
        MessageRefusedException e = assertThrows(MessageRefusedException.class,
                () -> handle(byId, message("{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":3}")));
        assertEquals(Outcome.CONFLICT, e.outcome());
        assertEquals("key was processed before with other values at /sku,/quantity", e.reason());
        assertEquals(1, runs.get());
        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.CONFLICT), outcomes());
    }

    @Test
    void conflictFieldsRejectABodyThatIsNotJson() {
        ConsumerSettings byHeader = Settings.withConflict(Settings.withKey(settings, KeyStrategy.HEADER, false, "order-id"),
                ConflictPolicy.STRICT, "/sku");
        Dispatch plain = Dispatch.of(MessageView.of("orders", "order.placed", null, Map.of("order-id", "o-1"),
                "sku=w".getBytes(StandardCharsets.UTF_8)));
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> handle(byHeader, plain));
        assertEquals(Outcome.REJECTED, e.outcome());
        assertTrue(e.reason().startsWith("conflict-fields need a JSON body: payload is not valid JSON"), e.reason());
        assertEquals(0, runs.get());
        assertEquals(0, storeSize());
    }

    /** A composite key with a part missing is REJECTED, naming the part, before the store is asked. */
    @Test
    void aCompositeKeyWithAMissingPartIsRejected() throws Exception {
        ConsumerSettings byTenantAndOrder = Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/tenant", "/orderId");
        MessageRefusedException e = assertThrows(MessageRefusedException.class,
                () -> handle(byTenantAndOrder, message("{\"orderId\":\"o-1\"}")));
        assertEquals(Outcome.REJECTED, e.outcome());
        assertEquals("payload has no value at /tenant", e.reason());
        assertEquals(0, storeSize());
        assertEquals("ran-1", handle(byTenantAndOrder, message("{\"tenant\":\"t-1\",\"orderId\":\"o-1\"}")));
        assertEquals("ran-2", handle(byTenantAndOrder, message("{\"tenant\":\"t-2\",\"orderId\":\"o-1\"}")),
                "another tenant's order o-1 is another message");
    }

    @Test
    void messageWithoutAKeyIsRejectedWithoutTouchingTheStore() {
        ConsumerSettings byId = Settings.withKey(settings, KeyStrategy.MESSAGE_ID, false);
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> handle(byId, message("m")));
        assertEquals(Outcome.REJECTED, e.outcome());
        assertTrue(e.reason().contains("message-id"), e.reason());
        assertEquals("", e.keyDigest());
        assertEquals(0, runs.get());
        assertEquals(0, storeSize());
    }

    private long storeSize() {
        try {
            var f = InMemoryClaimStore.class.getDeclaredField("cache");
            f.setAccessible(true);
            return ((com.github.benmanes.caffeine.cache.Cache<?, ?>) f.get(store)).estimatedSize();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void unreachableStoreUnderRejectPolicyAnswersRetryAndDoesNotRun() throws Exception {
        RedisSettings down = new RedisSettings(RedisSettings.Mode.STANDALONE, List.of("127.0.0.1:1"), "", false, null, null, 0,
                Duration.ofMillis(200), Duration.ofMillis(200), 1);
        try (RedisClaimStore unreachable = RedisClaimStore.connect(down)) {
            engine = engineOn(unreachable);
            MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> handle(settings, message("m")));
            assertEquals(Outcome.RETRY, e.outcome());
            assertEquals(0, runs.get());
            assertEquals(Layer.CLAIM_STORE, events.get(0).layer());
        }
    }

    @Test
    void holderWhoseLeaseExpiredMidRunCannotMarkTheNewHoldersClaimDone() throws Exception {
        MessageKey key = keys.derive(settings, view("m"), null);
        Guarded.call(engine, settings, message("m"), null, () -> {
            clock.advance(settings.lease().plusSeconds(1)); // the handler overran its lease
            assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "second", key.fingerprint(), settings.lease()).state());
            return null;
        });
        assertEquals(ClaimResult.inProgress(key.fingerprint()), store.claim(key.storeKey(), "third", key.fingerprint(), settings.lease()),
                "the first holder's completion was fenced off");
    }

    /** Real time: without renewals a 300 ms lease would expire during a 1.2 s handler and let a duplicate in. */
    @Test
    void watchdogRenewsTheLeaseWhileTheHandlerRuns() throws Exception {
        store = new InMemoryClaimStore(1000, Clock.systemUTC());
        engine = engineOn(store);
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(300));
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Object> slow = CompletableFuture.supplyAsync(() -> {
            try {
                return Guarded.call(engine, shortLease, message("slow"), null, () -> {
                    started.countDown();
                    Thread.sleep(1200);
                    return "slow-done";
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(started.await(5, TimeUnit.SECONDS));
        Thread.sleep(700); // past two lease lengths
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> handle(shortLease, message("slow")));
        assertEquals(Outcome.BUSY, e.outcome());
        assertEquals("slow-done", slow.get(10, TimeUnit.SECONDS));
        assertNull(handle(shortLease, message("slow")), "done after the holder finished");
        assertEquals(0, runs.get());
    }

    /**
     * Real time: one sweep renews every held claim, and a consumer with a shorter lease than any
     * seen before makes it run more often. The long-lease holder starts the sweep (every 200 ms);
     * the 150 ms lease would expire during its 900 ms handler unless the sweep speeds up.
     */
    @Test
    void renewalSweepSpeedsUpForAShorterLease() throws Exception {
        store = new InMemoryClaimStore(1000, Clock.systemUTC());
        engine = engineOn(store);
        ConsumerSettings longLease = Settings.withLease(settings, Duration.ofMillis(1200));
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(150));
        CountDownLatch longStarted = new CountDownLatch(1);
        CompletableFuture<Object> slowLong = slowHandler(longLease, "long", longStarted);
        assertTrue(longStarted.await(5, TimeUnit.SECONDS));
        CountDownLatch shortStarted = new CountDownLatch(1);
        CompletableFuture<Object> slowShort = slowHandler(shortLease, "short", shortStarted);
        assertTrue(shortStarted.await(5, TimeUnit.SECONDS));
        Thread.sleep(500); // past three short leases
        assertEquals(Outcome.BUSY, assertThrows(MessageRefusedException.class, () -> handle(shortLease, message("short"))).outcome());
        assertEquals(Outcome.BUSY, assertThrows(MessageRefusedException.class, () -> handle(longLease, message("long"))).outcome());
        assertEquals("done", slowShort.get(10, TimeUnit.SECONDS));
        assertEquals("done", slowLong.get(10, TimeUnit.SECONDS));
        assertEquals(0, runs.get());
    }

    private CompletableFuture<Object> slowHandler(ConsumerSettings s, String body, CountDownLatch started) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return Guarded.call(engine, s, message(body), null, () -> {
                    started.countDown();
                    Thread.sleep(900);
                    return "done";
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** A transaction that asks the completion before it "commits", as JTA's beforeCompletion does. */
    private static final class AskingRunner implements TransactionRunner {
        final List<Object> committed = new CopyOnWriteArrayList<>();

        @Override
        public <T> T run(Work<T> work, Completion completion) throws Exception {
            T result;
            try {
                result = work.call();
            } catch (Exception e) {
                completion.completed(false);
                throw e;
            }
            if (!completion.mayCommit()) {
                completion.completed(false);
                throw new IllegalStateException("rolled back at commit");
            }
            committed.add(result);
            completion.completed(true);
            return result;
        }
    }

    /**
     * A holder whose lease lapsed (a pause longer than the lease) while another holder took the key
     * must not commit: without the ledger nothing else stops a second effect. Before the check, the
     * first holder committed and reported PROCESSED.
     */
    @Test
    void aHolderWhoseClaimWasTakenOverRollsBackInsteadOfCommitting() throws Exception {
        AskingRunner tx = new AskingRunner();
        engine = new GuardEngine(store, tx, null, scheduler, events::add, keys);
        MessageKey key = keys.derive(settings, view("paused"), null);
        RecordingDispatch delivery = new RecordingDispatch(view("paused"));
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> Guarded.call(engine, settings, delivery, null, () -> {
            clock.advance(settings.lease().plusSeconds(1)); // paused past the lease
            assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "second", key.fingerprint(), settings.lease()).state());
            return "effect";
        }));
        assertEquals(Outcome.RETRY, e.outcome(), "the message comes again; not an attempt");
        assertEquals(List.of(), tx.committed, "the first holder's effect did not commit");
        assertEquals(List.of(Outcome.RETRY), delivery.outcomes());
        assertEquals(ClaimResult.inProgress(key.fingerprint()), store.claim(key.storeKey(), "third", key.fingerprint(), settings.lease()),
                "the second holder keeps the claim: the first one's release was fenced off");
    }

    /** A claim the store lost (flushed, failed over) and nobody else took is taken again, and the commit goes on. */
    @Test
    void aClaimTheStoreLostIsTakenAgainBeforeTheCommit() throws Exception {
        AskingRunner tx = new AskingRunner();
        engine = new GuardEngine(store, tx, null, scheduler, events::add, keys);
        RecordingDispatch delivery = new RecordingDispatch(view("lost"));
        assertEquals("effect", Guarded.call(engine, settings, delivery, null, () -> {
            clock.advance(settings.lease().plusSeconds(1)); // the claim expired, nobody took it
            return "effect";
        }));
        assertEquals(List.of("effect"), tx.committed);
        assertEquals(List.of(Outcome.PROCESSED), delivery.outcomes());
        assertNull(handle(settings, message("lost")), "completed: a redelivery is a duplicate");
    }

    /** A store that can be taken down (every call fails, as when Redis is unreachable) and closed. */
    private static class SwitchableStore implements dev.onceonly.spi.ClaimStore {
        final dev.onceonly.spi.ClaimStore inner;
        volatile boolean down;
        /** The answer of the last completion the inner store made. */
        volatile dev.onceonly.spi.HolderResult lastCompletion;

        SwitchableStore(dev.onceonly.spi.ClaimStore inner) {
            this.inner = inner;
        }

        private void check(String operation) {
            if (down) {
                throw new dev.onceonly.spi.ClaimStoreException("switchable", operation, new java.io.IOException("down"));
            }
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            check("claim");
            return inner.claim(key, token, fingerprint, lease);
        }

        @Override
        public dev.onceonly.spi.HolderResult complete(String key, String token, String fingerprint, Duration retention) {
            check("complete");
            return lastCompletion = inner.complete(key, token, fingerprint, retention);
        }

        @Override
        public dev.onceonly.spi.HolderResult release(String key, String token) {
            check("release");
            return inner.release(key, token);
        }

        @Override
        public dev.onceonly.spi.HolderResult extend(String key, String token, Duration lease) {
            check("extend");
            return inner.extend(key, token, lease);
        }

        @Override
        public String name() {
            return "switchable";
        }

        @Override
        public java.util.Optional<String> problem() {
            return down ? java.util.Optional.of("down") : java.util.Optional.empty();
        }

        /** Closed: down for good, as a closed Redis client is. */
        @Override
        public void close() {
            down = true;
        }
    }

    /**
     * Shutdown: the engine waits for a running handler before the store closes, so the handler's
     * lease stays renewed and its key is marked done. Before, the runtime closed the store at once:
     * the completion failed and the message's redelivery would have run again.
     */
    /**
     * The phases the listener times (metrics, tracing spans): each started and ended, in order, for a
     * processed message and for a refused one; the guard's own time excludes the handler's.
     */
    @Test
    void theListenerTimesEachPhaseAndTheGuardsOwnTimeLeavesOutTheHandler() throws Exception {
        List<String> phases = new CopyOnWriteArrayList<>();
        GuardEngine timed = new GuardEngine(store, TransactionRunner.NONE, null, scheduler, new dev.onceonly.spi.GuardListener() {
            @Override
            public void onOutcome(GuardEvent event) {
                events.add(event);
            }

            @Override
            public Phase startPhase(String consumer, String phase) {
                phases.add(consumer + " " + phase);
                return () -> phases.add("end " + phase);
            }
        }, keys);
        assertEquals("slow", Guarded.call(timed, settings, message("timed"), null, () -> {
            Thread.sleep(500);
            return "slow";
        }));
        assertEquals(List.of("orders claim", "end claim", "orders finalise", "end finalise"), phases);
        long guard = events.get(0).guardNanos();
        assertTrue(guard > 0 && guard < TimeUnit.MILLISECONDS.toNanos(500), "the guard's time, without the handler's: " + guard);

        phases.clear();
        long r0 = System.nanoTime();
        assertNull(Guarded.call(timed, settings, message("timed"), null, () -> "again"));
        long refusedTook = System.nanoTime() - r0;
        assertEquals(List.of("orders claim", "end claim"), phases, "a duplicate ends at the claim");
        assertTrue(events.get(1).guardNanos() > 0 && events.get(1).guardNanos() <= refusedTook, "" + events.get(1).guardNanos());
    }

    /** A listener that throws cannot change what happens to the message: the delivery still gets its decision. */
    @Test
    void aFailingListenerChangesNothingForTheMessage() throws Exception {
        GuardEngine broken = new GuardEngine(store, TransactionRunner.NONE, null, scheduler, event -> {
            throw new IllegalStateException("metrics backend down");
        }, keys);
        RecordingDispatch delivery = new RecordingDispatch(view("listened"));
        assertEquals("ok", Guarded.call(broken, settings, delivery, null, () -> "ok"));
        assertEquals(List.of(Outcome.PROCESSED), delivery.outcomes());
        RecordingDispatch copy = new RecordingDispatch(view("listened"));
        assertNull(Guarded.call(broken, settings, copy, null, () -> "again"));
        assertEquals(List.of(Outcome.DUPLICATE), copy.outcomes());
    }

    /**
     * A handler still running at the timeout: close waits that long, then gives up and says how many
     * calls are unfinished (the runtime logs ONCE0008W with that count); the handler still completes.
     */
    @Test
    void closingGivesUpAtTheTimeoutAndCountsTheUnfinishedCalls() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Object> running = CompletableFuture.supplyAsync(() -> {
            try {
                return Guarded.call(engine, settings, message("hangs"), null, () -> {
                    started.countDown();
                    release.await();
                    return "late";
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(started.await(5, TimeUnit.SECONDS));
        long t0 = System.nanoTime();
        assertEquals(1, engine.close(Duration.ofMillis(300)));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(300), "waited for the timeout");
        release.countDown();
        assertEquals("late", running.get(5, TimeUnit.SECONDS));
        assertEquals(0, engine.inFlight());
    }

    @Test
    void closingWaitsForRunningHandlersBeforeTheStoreCloses() throws Exception {
        InMemoryClaimStore memory = new InMemoryClaimStore(1000, Clock.systemUTC());
        SwitchableStore switchable = new SwitchableStore(memory);
        engine = engineOn(switchable);
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(300));
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Object> running = CompletableFuture.supplyAsync(() -> {
            try {
                return Guarded.call(engine, shortLease, message("closing"), null, () -> {
                    started.countDown();
                    Thread.sleep(900);
                    return "finished";
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(started.await(5, TimeUnit.SECONDS));
        assertEquals(0, engine.close(Duration.ofSeconds(10)), "nothing left unfinished");
        // close returned after the handler's completion was written, so closing the store now loses nothing
        switchable.close();
        MessageKey key = keys.derive(shortLease, view("closing"), null);
        assertEquals(ClaimState.DONE, memory.claim(key.storeKey(), "later", key.fingerprint(), Duration.ofSeconds(1)).state());
        assertEquals("finished", running.get(5, TimeUnit.SECONDS));
    }

    /**
     * The store fails just as the committed message is to be marked done: the sweep keeps trying,
     * off the consumer's thread, and marks it once the store answers. Before, the marker was simply
     * missing and a copy published later ran again.
     */
    @Test
    void aCompletionThatFailedIsRetriedUntilTheStoreAnswers() throws Exception {
        InMemoryClaimStore memory = new InMemoryClaimStore(1000, Clock.systemUTC());
        SwitchableStore switchable = new SwitchableStore(memory);
        engine = engineOn(switchable);
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(300));
        RecordingDispatch delivery = new RecordingDispatch(view("flaky-store"));
        assertEquals("done", Guarded.call(engine, shortLease, delivery, null, () -> {
            switchable.down = true; // Redis goes away while the handler commits
            return "done";
        }));
        assertEquals(List.of(Outcome.PROCESSED), delivery.outcomes());
        Thread.sleep(200);
        switchable.down = false;
        MessageKey key = keys.derive(shortLease, view("flaky-store"), null);
        // Watched on the store's answers, not by claiming: a claim that looked while the mark was
        // still pending would take the lapsed key itself and keep the retry from marking it.
        dev.onceonly.testing.Eventually.await("the retried completion applied", Duration.ofSeconds(10),
                () -> switchable.lastCompletion, r -> r == dev.onceonly.spi.HolderResult.APPLIED);
        assertEquals(ClaimState.DONE, memory.claim(key.storeKey(), "later", key.fingerprint(), Duration.ofMillis(50)).state(),
                "the key marked done");
    }

    /** The claim expired (or the store lost it) before the completion, and nobody took it: marked done anyway. */
    @Test
    void aCommittedMessageWhoseClaimLapsedIsStillMarkedDone() throws Exception {
        assertEquals("ran-1", Guarded.call(engine, settings, message("lapsed"), null, () -> {
            clock.advance(settings.lease().plusSeconds(1));
            return "ran-" + runs.incrementAndGet();
        }));
        assertNull(handle(settings, message("lapsed")), "a later copy is a duplicate");
        assertEquals(1, runs.get());
    }

    /**
     * One store node slow to answer (a renewal of one key takes longer than another key's whole
     * lease) must not hold up the renewals of the other claims. Before, the sweep renewed one
     * claim after the other on its thread: the other lease ran out behind the slow renewal and a
     * second holder could take that key while its handler still ran.
     */
    @Test
    void aSlowRenewalDoesNotHoldUpTheOthers() throws Exception {
        InMemoryClaimStore memory = new InMemoryClaimStore(1000, Clock.systemUTC());
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(300));
        String slowKey = keys.derive(shortLease, view("slow-node"), null).storeKey();
        dev.onceonly.spi.ClaimStore slowForOneKey = new SwitchableStore(memory) {
            @Override
            public dev.onceonly.spi.HolderResult extend(String key, String token, Duration lease) {
                if (key.equals(slowKey)) {
                    try {
                        Thread.sleep(1500); // a node that answers late
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return super.extend(key, token, lease);
            }
        };
        ScheduledExecutorService pool = Executors.newScheduledThreadPool(4);
        try {
            engine = new GuardEngine(slowForOneKey, TransactionRunner.NONE, null, pool, events::add, keys);
            CountDownLatch started = new CountDownLatch(2);
            CompletableFuture<Object> slow = slowHandler(shortLease, "slow-node", started);
            CompletableFuture<Object> fast = slowHandler(shortLease, "fast-node", started);
            assertTrue(started.await(5, TimeUnit.SECONDS));
            Thread.sleep(700); // the slow renewal is still waiting; the fast key's lease is 300 ms
            MessageKey fastKey = keys.derive(shortLease, view("fast-node"), null);
            assertEquals(ClaimState.IN_PROGRESS, memory.claim(fastKey.storeKey(), "intruder", fastKey.fingerprint(),
                    Duration.ofSeconds(5)).state(), "the fast key's lease was kept");
            assertEquals("done", fast.get(10, TimeUnit.SECONDS));
            assertEquals("done", slow.get(10, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The key a handler passes downstream ({@code Idempotency-Key}, outbox ids) is the store key,
     * prefix included: two applications with a consumer of the same name send different keys for the
     * same message, and each sends the same key on every delivery.
     */
    @Test
    void theKeySentDownstreamCarriesTheApplicationsKeyPrefix() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        for (String prefix : List.of("billing:", "shipping:", "billing:")) {
            GuardEngine application = new GuardEngine(new InMemoryClaimStore(100, clock), TransactionRunner.NONE, null,
                    scheduler, events::add, new KeyDeriver(prefix));
            Guarded.call(application, settings, message("same"), null, () -> seen.add(dev.onceonly.internal.support.CurrentKey.get()));
        }
        MessageKey billing = new KeyDeriver("billing:").derive(settings, view("same"), null);
        assertEquals(List.of(billing.storeKey(), new KeyDeriver("shipping:").derive(settings, view("same"), null).storeKey(),
                billing.storeKey()), seen);
        assertTrue(seen.get(0).startsWith("billing:orders:"), seen.get(0));
    }
}
