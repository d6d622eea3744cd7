package dev.onceonly.internal.result;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.Replayable;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.Decision;
import dev.onceonly.internal.engine.GuardEngine;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.memory.InMemoryResultStore;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.ResultStore;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Results kept beside the guard, on the real engine: the in-memory claim and result stores (a clock
 * the test moves), the handler wrapped by {@link ResultKeeper} and the runner by
 * {@link ResultWrites}, each decision translated as the interceptor does. Every test looks at what
 * the call returned and what the stores hold. (With the ledger, the result is written in the
 * transaction: {@code ResultStoreContract} on the ledger, and the ITs on Liberty.)
 */
public class ResultKeepingTest {

    /** The result a guarded method of these tests returns. */
    public record Receipt(String chargeId, int amount) {
    }

    private final MutableClock clock = new MutableClock();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final KeyDeriver keys = new KeyDeriver("oo:");
    /** The result writes, each with the state its key's claim had then: {@code result <digest> while <state>}. */
    private final List<String> writes = new CopyOnWriteArrayList<>();
    private final InMemoryClaimStore claims = new InMemoryClaimStore(10_000, clock);
    private final InMemoryResultStore results = new InMemoryResultStore(1_000, clock);
    private final ResultStore recordedResults = new Recorded(results);
    private final ConsumerSettings settings = Settings.withKey(Settings.defaults("payments", KeyStrategy.CONTENT),
            KeyStrategy.JSON_POINTER, false, "/id");
    private final AtomicInteger runs = new AtomicInteger();
    private GuardEngine engine = engine(TransactionRunner.NONE);

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private GuardEngine engine(TransactionRunner transactions) {
        return new GuardEngine(claims, new ResultWrites(transactions), null, scheduler, event -> { }, keys);
    }

    private ResultKeeper keeper(int maxBytes) throws Exception {
        Type replayableReceipt = ResultKeepingTest.class.getDeclaredMethod("receiptOf", int.class).getGenericReturnType();
        return new ResultKeeper("payments", replayableReceipt, new ResultSettings(maxBytes, Duration.ofHours(1)), recordedResults);
    }

    /** The shape of the guarded method: its generic return type is what the keeper stores. */
    private Replayable<Receipt> receiptOf(int amount) {
        return Replayable.of(new Receipt("charge-" + runs.incrementAndGet(), amount));
    }

    /** One guarded call, translated as the interceptor translates the decision. */
    private Object call(ResultKeeper keeper, String body, TransactionRunner.Work<Object> handler) throws Exception {
        Dispatch message = Dispatch.of(MessageView.of("", "", null, Map.of(), body.getBytes(StandardCharsets.UTF_8)));
        Decision<Object> decision = engine.guard(settings, message, null, keeper.keeping(handler));
        Object result = decision.resultOrThrow();
        return decision.outcome() == Outcome.DUPLICATE
                ? keeper.replay(keys.derive(settings, message.message(), null).storeKey())
                : keeper.returned(result);
    }

    private String key(String body) throws Exception {
        return keys.derive(settings, MessageView.of("", "", null, Map.of(), body.getBytes(StandardCharsets.UTF_8)), null).storeKey();
    }

    /** The state of the claim of {@code body}'s key, asked by a claim (which takes an absent key). */
    private ClaimState claimOf(String body) throws Exception {
        return claims.claim(key(body), "probe", "", Duration.ofSeconds(1)).state();
    }

    @Test
    void aDuplicateGetsTheFirstCallsResultReplayed() throws Exception {
        ResultKeeper keeper = keeper(ResultSettings.DEFAULT_MAX_BYTES);
        String body = "{\"id\":\"p-1\",\"amount\":10}";

        Object first = call(keeper, body, () -> receiptOf(10));
        Object again = call(keeper, body, () -> receiptOf(10));

        assertEquals(Replayable.of(new Receipt("charge-1", 10)), first, "the call's own result, not replayed");
        assertEquals(Replayable.replayed(new Receipt("charge-1", 10)), again, "the first call's result, replayed");
        assertEquals(1, runs.get(), "the duplicate did not run");
        assertEquals(Optional.of("{\"amount\":10,\"chargeId\":\"charge-1\"}"), results.get(key(body)));
    }

    /** Without the ledger, the result is written after the commit and before the key is marked done. */
    @Test
    void theResultIsStoredBeforeTheKeyIsMarkedDone() throws Exception {
        String body = "{\"id\":\"p-2\"}";
        call(keeper(ResultSettings.DEFAULT_MAX_BYTES), body, () -> receiptOf(1));
        String digest = key(body).substring(key(body).lastIndexOf(':') + 1);
        assertEquals(List.of("result " + digest + " while " + ClaimState.IN_PROGRESS), writes);
        assertEquals(ClaimState.DONE, claimOf(body), "then marked done");
    }

    @Test
    void aConflictStaysAConflictAndGetsNoResult() throws Exception {
        ResultKeeper keeper = keeper(ResultSettings.DEFAULT_MAX_BYTES);
        call(keeper, "{\"id\":\"p-3\",\"amount\":10}", () -> receiptOf(10));
        MessageRefusedException refused = assertThrows(MessageRefusedException.class,
                () -> call(keeper, "{\"id\":\"p-3\",\"amount\":99}", () -> receiptOf(99)));
        assertEquals(Outcome.CONFLICT, refused.outcome());
        assertEquals(1, runs.get());
    }

    /** A result over the limit is not stored, said once without the result; the call succeeds, its duplicate gets none. */
    @Test
    void aResultOverTheLimitIsNotStoredAndTheCallStillSucceeds() throws Exception {
        ResultKeeper keeper = keeper(40);
        String body = "{\"id\":\"p-4\"}";
        try (LogCapture log = new LogCapture()) {
            Object first = call(keeper, body, () -> Replayable.of(new Receipt("a-secret-looking-charge-id-of-some-length", 5)));
            assertEquals(Replayable.of(new Receipt("a-secret-looking-charge-id-of-some-length", 5)), first);
            assertEquals(1, log.lines("ONCE0902W").size(), log.lines().toString());
            assertTrue(log.lines("ONCE0902W").get(0).contains("over result.max-size (40 bytes)"), log.lines().toString());
            assertFalse(String.join("\n", log.lines()).contains("secret"), "the result is never logged");
        }
        assertEquals(Optional.empty(), results.get(key(body)));
        assertNull(call(keeper, body, () -> receiptOf(5)), "the duplicate gets what a duplicate gets without a result");
        assertEquals(List.of(), writes);
        assertEquals(ClaimState.DONE, claimOf(body), "marked done all the same");
    }

    @Test
    void aHandlerThatFailsStoresNothingAndItsRetryStoresItsOwn() throws Exception {
        ResultKeeper keeper = keeper(ResultSettings.DEFAULT_MAX_BYTES);
        String body = "{\"id\":\"p-5\"}";
        assertThrows(IllegalStateException.class, () -> call(keeper, body, () -> {
            throw new IllegalStateException("provider down");
        }));
        assertEquals(Optional.empty(), results.get(key(body)));
        assertEquals(Replayable.of(new Receipt("charge-1", 7)), call(keeper, body, () -> receiptOf(7)));
        assertEquals(Replayable.replayed(new Receipt("charge-1", 7)), call(keeper, body, () -> receiptOf(7)));
    }

    /**
     * A run whose transaction did not commit (here: the commit refused after the handler returned, as
     * for a holder whose claim was taken over) writes nothing, so it cannot overwrite the result of the
     * run that did commit.
     */
    @Test
    void aRunThatDidNotCommitWritesNoResult() throws Exception {
        engine = engine(new TransactionRunner() {
            @Override
            public <T> T run(Work<T> work, Completion completion) throws Exception {
                T r = work.call();
                completion.completed(false);
                return r;
            }
        });
        String body = "{\"id\":\"p-6\"}";
        call(keeper(ResultSettings.DEFAULT_MAX_BYTES), body, () -> receiptOf(3));
        assertEquals(Optional.empty(), results.get(key(body)));
        assertEquals(List.of(), writes);
        assertEquals(ClaimState.ACQUIRED, claimOf(body), "released");
    }

    /** A stored result that no longer reads as the method's type is logged, and the duplicate gets none. */
    @Test
    void aStoredResultThatCannotBeReadGivesTheDuplicateNone() throws Exception {
        ResultKeeper keeper = keeper(ResultSettings.DEFAULT_MAX_BYTES);
        String body = "{\"id\":\"p-7\"}";
        call(keeper, body, () -> receiptOf(3));
        results.put(key(body), "{\"amount\":\"not a number\"", Duration.ofHours(1));
        try (LogCapture log = new LogCapture()) {
            assertNull(call(keeper, body, () -> receiptOf(3)));
            assertEquals(1, log.lines("ONCE0904W").size(), log.lines().toString());
            assertFalse(log.lines("ONCE0904W").get(0).contains("not a number"), "the stored data is never logged");
        }
    }

    /** Records the result writes, and where the key's claim was then. */
    private final class Recorded implements ResultStore {
        private final ResultStore store;

        Recorded(ResultStore store) {
            this.store = store;
        }

        @Override
        public String name() {
            return store.name();
        }

        @Override
        public boolean transactional() {
            return store.transactional();
        }

        /** Asks the claim store too: a claim of a key held or done changes nothing and says which it is. */
        @Override
        public void put(String key, String result, Duration retention) {
            ClaimState claim = claims.claim(key, "probe", "", Duration.ofSeconds(1)).state();
            writes.add("result " + key.substring(key.lastIndexOf(':') + 1) + " while " + claim);
            store.put(key, result, retention);
        }

        @Override
        public Optional<String> get(String key) {
            return store.get(key);
        }
    }
}
