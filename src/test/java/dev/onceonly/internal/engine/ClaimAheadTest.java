package dev.onceonly.internal.engine;

import dev.onceonly.testing.ForwardingClaimStore;
import dev.onceonly.testing.Guarded;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimAheadSlot;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Claims taken ahead for buffered deliveries ({@link GuardEngine#claimAhead}): one call to the store
 * for several messages, then each guarded without a claim of its own, under the same fencing and
 * lease rules as any claim.
 */
class ClaimAheadTest {

    private final KeyDeriver keys = new KeyDeriver("oo:");
    private final MutableClock clock = new MutableClock();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<GuardEvent> events = new CopyOnWriteArrayList<>();
    private final InMemoryClaimStore memory = new InMemoryClaimStore(10_000, clock);
    private final CountingStore store = new CountingStore(memory);
    /** Leases fall due by the test's clock, as the store's do. */
    private final GuardEngine engine = new GuardEngine(store, TransactionRunner.NONE, null, scheduler, events::add, keys,
            () -> TimeUnit.MILLISECONDS.toNanos(clock.millis()));
    private final ConsumerSettings settings = Settings.defaults("orders", KeyStrategy.CONTENT);
    private final AtomicInteger runs = new AtomicInteger();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    @Test
    void theDeliveriesBehindOneAreClaimedWithItInOneCallAndThenGuardedWithoutAClaimOfTheirOwn() throws Exception {
        List<RecordingDispatch> fresh = List.of(delivery("a"), delivery("b"), delivery("c"), delivery("d"));
        RecordingDispatch done = delivery("done-before");
        guard(delivery("done-before"));
        RecordingDispatch busy = delivery("held-by-another");
        MessageKey held = key("held-by-another");
        memory.claim(held.storeKey(), "another", held.fingerprint(), Duration.ofSeconds(30));
        store.claims.set(0);
        fresh.get(0).offerBehind(fresh.get(1), done, busy, fresh.get(2), fresh.get(3));

        assertEquals("ran-2", guard(fresh.get(0)));

        assertEquals(1, store.batches.get(), "one call to the store, for the first and the five behind it");
        assertEquals(0, store.claims.get(), "and no claim of its own");
        for (RecordingDispatch d : fresh.subList(1, 4)) {
            assertNotNull(d.held(), "an acquired claim is kept by its delivery");
            assertEquals(ClaimState.IN_PROGRESS, probe(d).state(), "held while the delivery waits");
        }
        assertNotNull(done.held(), "a done answer is kept too: the duplicate needs no round trip");
        assertNull(busy.held(), "an in-progress answer may be over by the message's turn: not kept");

        for (RecordingDispatch d : fresh.subList(1, 4)) {
            guard(d);
        }
        assertNull(guard(done));
        assertThrows(MessageRefusedException.class, () -> guard(busy));

        assertEquals(1, store.claims.get(), "only the message held by another claimed in its turn");
        assertEquals(1, store.batches.get());
        assertEquals(5, runs.get(), "the four, and the one done before");
        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED,
                Outcome.DUPLICATE, Outcome.BUSY), outcomes().subList(1, 7));
        assertEquals(Layer.CLAIM_STORE, events.get(5).layer());
        for (RecordingDispatch d : fresh) {
            assertEquals(ClaimState.DONE, probe(d).state());
            d.settle(); // acked: the claim was used, abandoning it changes nothing
            assertEquals(ClaimState.DONE, probe(d).state());
        }
    }

    /** A delivery settled without being guarded (requeued at stop, its channel closed) gives its claim back. */
    /** A claim taken ahead brings its fence to its handler, as a claim of its own would: above the key's earlier claims'. */
    @Test
    void aClaimTakenAheadBringsItsFenceToTheHandler() throws Exception {
        MessageKey k = key("fenced-behind");
        long earlier = memory.claim(k.storeKey(), "earlier", k.fingerprint(), Duration.ofSeconds(30)).fence();
        memory.release(k.storeKey(), "earlier");
        RecordingDispatch first = delivery("fenced-first");
        RecordingDispatch behind = delivery("fenced-behind");
        first.offerBehind(behind);
        long[] fences = new long[2];
        Guarded.call(engine, settings, first, null, () -> fences[0] = dev.onceonly.internal.support.CurrentKey.fence());
        assertNotNull(behind.held(), "claimed ahead with the first");
        int claimsBefore = store.claims.get();
        Guarded.call(engine, settings, behind, null, () -> fences[1] = dev.onceonly.internal.support.CurrentKey.fence());
        assertEquals(claimsBefore, store.claims.get(), "no claim of its own in its turn");
        assertTrue(fences[0] > 0, "the first's fence " + fences[0]);
        assertTrue(fences[1] > earlier, "the fence taken ahead " + fences[1] + " above the key's earlier " + earlier);
    }

    @Test
    void aClaimWhoseDeliveryIsSettledUnguardedIsReleased() throws Exception {
        RecordingDispatch first = delivery("first");
        RecordingDispatch waiting = delivery("never-handed-over");
        first.offerBehind(waiting);
        guard(first);
        assertEquals(ClaimState.IN_PROGRESS, probe(waiting).state());

        waiting.settle();

        assertEquals(ClaimState.ACQUIRED, memory.claim(key("never-handed-over").storeKey(), "redelivered-elsewhere", "",
                Duration.ofSeconds(30)).state(), "a redelivery elsewhere finds the key free, not BUSY until the lease ends");
    }

    /** The fencing of any claim: one the sweep found lost is not used; the guard claims in the message's turn. */
    @Test
    void aClaimLostWhileItsDeliveryWaitedIsNotUsed() throws Exception {
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(600)); // the sweep every 100 ms
        RecordingDispatch first = delivery("first-short");
        RecordingDispatch waiting = delivery("lost-meanwhile");
        first.offerBehind(waiting);
        guard(shortLease, first);
        clock.advance(Duration.ofSeconds(1)); // the lease ran out (a pause, a failover)
        MessageKey k = key("lost-meanwhile");
        assertEquals(ClaimState.ACQUIRED, memory.claim(k.storeKey(), "another", k.fingerprint(), Duration.ofSeconds(30)).state());
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (store.extendsRefused.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10); // until the sweep tried to renew it and found it taken
        }

        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> guard(shortLease, waiting));

        assertEquals(Outcome.BUSY, e.outcome(), "claimed in its turn, and found held by the other holder");
        assertEquals(1, runs.get(), "only the first ran");
    }

    /**
     * A claim whose renewals failed (the store unreachable) for longer than its lease may have run
     * out and been taken by another holder: it is not used, and the guard claims in the message's
     * turn, rather than run the handler beside that holder.
     */
    @Test
    void aClaimNotRenewedForALeaseBecauseTheStoreFailedIsNotUsed() throws Exception {
        ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(600));
        RecordingDispatch first = delivery("first-unrenewed");
        RecordingDispatch waiting = delivery("unrenewed-meanwhile");
        first.offerBehind(waiting);
        guard(shortLease, first);
        store.failExtends.set(true);
        clock.advance(Duration.ofSeconds(1)); // no renewal got through for longer than the lease
        MessageKey k = key("unrenewed-meanwhile");
        assertEquals(ClaimState.ACQUIRED, memory.claim(k.storeKey(), "another", k.fingerprint(), Duration.ofSeconds(30)).state());
        store.failExtends.set(false);

        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> guard(shortLease, waiting));

        assertEquals(Outcome.BUSY, e.outcome(), "claimed in its turn, and found held by the other holder");
        assertEquals(1, runs.get(), "the handler did not run beside the other holder");
    }

    /** A store that fails the batch leaves nothing held by it: each message is claimed in its turn. */
    @Test
    void aFailedBatchIsReleasedAndEachMessageClaimsInItsTurn() throws Exception {
        store.failNextBatch.set(true);
        RecordingDispatch first = delivery("store-hiccup");
        RecordingDispatch behind = delivery("behind-the-hiccup");
        first.offerBehind(behind);

        assertEquals("ran-1", guard(first));

        assertNull(behind.held());
        assertEquals(1, store.claims.get(), "the first claimed in its turn after the failed batch");
        assertEquals("ran-2", guard(behind));
    }

    /**
     * A store that took the batch's claims but failed to answer: each is released at once, not left
     * to lapse (a copy meanwhile would be BUSY for a lease).
     */
    @Test
    void aBatchTheStoreTookButFailedToAnswerIsReleased() throws Exception {
        store.failAfterNextBatch.set(true);
        RecordingDispatch first = delivery("lost-reply");
        RecordingDispatch behind = delivery("behind-the-lost-reply");
        first.offerBehind(behind);

        assertEquals("ran-1", guard(first));

        assertNull(behind.held());
        assertEquals(ClaimState.ACQUIRED, probe(behind).state(), "not held by the failed batch");
    }

    /** A stopping engine claims nothing ahead: those deliveries are given back, and their claims would outlive the stop. */
    @Test
    void aClosingEngineClaimsNothingAhead() throws Exception {
        engine.close(Duration.ZERO);
        RecordingDispatch first = delivery("while-stopping");
        RecordingDispatch behind = delivery("behind-while-stopping");
        first.offerBehind(behind);
        assertEquals("ran-1", guard(first));
        assertEquals(0, store.batches.get());
        assertNull(behind.held());
    }

    /** A claim its slot does not keep ({@link ClaimAheadSlot#hold} refuses it) must not stay held until its lease ends. */
    @Test
    void aClaimItsDispatchDoesNotKeepIsGivenBackAtOnce() throws Exception {
        RecordingDispatch first = delivery("first-plain");
        first.offerBehind(new ClaimAheadSlot() { // a slot whose delivery was settled as the claim came back
            @Override
            public MessageView message() {
                return view("plain");
            }

            @Override
            public List<ClaimAheadSlot> behind() {
                return List.of();
            }

            @Override
            public boolean hold(ClaimAheadSlot.Claim claim) {
                return false;
            }

            @Override
            public ClaimAheadSlot.Claim held() {
                return null;
            }
        });
        guard(first);
        assertEquals(ClaimState.ACQUIRED, memory.claim(key("plain").storeKey(), "someone", "", Duration.ofSeconds(30)).state());
    }

    /** With an @IdempotencyKey argument the keys of the deliveries behind cannot be derived: no batch. */
    @Test
    void aCallKeyedOnItsArgumentClaimsAlone() throws Exception {
        RecordingDispatch first = delivery("keyed-first");
        RecordingDispatch behind = delivery("keyed-behind");
        first.offerBehind(behind);
        Guarded.call(engine, Settings.withKey(settings, KeyStrategy.PARAMETER, false), first, "order-7", () -> "ran");
        assertEquals(0, store.batches.get());
        assertNull(behind.held());
    }

    /**
     * Issue 46, suspicion: a body nested too deeply for the JSON parser behind a good message, on a
     * consumer keyed by a JSON Pointer. Deriving the keys of the deliveries behind the good one
     * threw the parser's RuntimeException out of the good message's guard (claim-ahead caught
     * KeyRejectedException only): the good message failed for its neighbour's bytes. Now the bad one
     * is skipped ahead and refused in its own turn, the good ones behind it still claimed ahead.
     */
    @Test
    void aBodyTooDeepToParseBehindAGoodMessageNeitherBreaksItNorTheLine() throws Exception {
        ConsumerSettings byPointer = Settings.withKey(settings, KeyStrategy.JSON_POINTER, false, "/orderId");
        RecordingDispatch good = delivery("{\"orderId\":\"good-1\"}");
        RecordingDispatch deep = delivery("{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000));
        RecordingDispatch behind = delivery("{\"orderId\":\"good-2\"}");
        good.offerBehind(deep, behind);

        assertEquals("ran-1", guard(byPointer, good));
        assertNull(deep.held(), "no key, no claim ahead");
        assertNotNull(behind.held(), "the good one behind the bad one still claimed ahead");
        MessageRefusedException refused = assertThrows(MessageRefusedException.class, () -> guard(byPointer, deep));
        assertEquals(Outcome.REJECTED, refused.outcome());
        assertEquals("ran-2", guard(byPointer, behind));
        assertEquals(1, store.batches.get());
    }

    /**
     * Whatever deriving a neighbour's key throws, not only a refusal (here a view whose headers cannot
     * be read), is that neighbour's own: the message in front is guarded as if it were not there.
     */
    @Test
    void anyFailureDerivingANeighboursKeyIsLeftToItsOwnTurn() throws Exception {
        ConsumerSettings byHeader = Settings.withKey(settings, KeyStrategy.HEADER, false, "order-id");
        RecordingDispatch good = new RecordingDispatch(MessageView.of("orders", "order.placed", null, Map.of("order-id", "o-1"),
                "{}".getBytes(StandardCharsets.UTF_8)));
        MessageView unreadable = new MessageView() {
            @Override public String exchange() { return "orders"; }
            @Override public String routingKey() { return "order.placed"; }
            @Override public String messageId() { return null; }
            @Override public Map<String, Object> headers() { throw new IllegalStateException("headers unreadable"); }
            @Override public byte[] body() { return new byte[0]; }
        };
        RecordingDispatch broken = new RecordingDispatch(unreadable);
        good.offerBehind(broken);

        assertEquals("ran-1", guard(byHeader, good));
        assertNull(broken.held());
    }

    // ---- helpers ----

    private String guard(Dispatch d) throws Exception {
        return guard(settings, d);
    }

    private String guard(ConsumerSettings s, Dispatch d) throws Exception {
        return Guarded.call(engine, s, d, null, () -> "ran-" + runs.incrementAndGet());
    }

    private ClaimResult probe(RecordingDispatch d) {
        MessageKey k = keys.derive(settings, d.message(), null);
        ClaimResult r = memory.claim(k.storeKey(), "probe", k.fingerprint(), Duration.ofSeconds(1));
        if (r.state() == ClaimState.ACQUIRED) {
            memory.release(k.storeKey(), "probe");
        }
        return r;
    }

    private MessageKey key(String body) {
        return keys.derive(settings, view(body), null);
    }

    private List<Outcome> outcomes() {
        return events.stream().map(GuardEvent::outcome).toList();
    }

    private static RecordingDispatch delivery(String body) {
        return new RecordingDispatch(view(body));
    }

    private static MessageView view(String body) {
        return MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    /** The in-memory store, counting single claims and batches, failing the next batch (before or after applying it) on request. */
    private static final class CountingStore extends ForwardingClaimStore implements BatchClaimStore {
        final AtomicInteger claims = new AtomicInteger();
        final AtomicInteger batches = new AtomicInteger();
        final AtomicInteger extendsRefused = new AtomicInteger();
        final AtomicBoolean failNextBatch = new AtomicBoolean();
        /** The next batch is applied, then fails as if its reply were lost. */
        final AtomicBoolean failAfterNextBatch = new AtomicBoolean();
        final AtomicBoolean failExtends = new AtomicBoolean();

        CountingStore(ClaimStore store) {
            super(store);
        }

        @Override
        public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
            batches.incrementAndGet();
            if (failNextBatch.getAndSet(false)) {
                throw new ClaimStoreException("counting", "claim", new IOException("connection reset"));
            }
            List<ClaimResult> results = BatchClaimStore.looping(store).claimAll(requests);
            if (failAfterNextBatch.getAndSet(false)) {
                throw new ClaimStoreException("counting", "claim", new IOException("reply lost"));
            }
            return results;
        }

        @Override
        public List<HolderResult> completeAll(List<CompleteRequest> requests) {
            return BatchClaimStore.looping(this).completeAll(requests);
        }

        @Override
        public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
            List<HolderResult> completed = completeAll(completions);
            return new Answers(completed, claimAll(claims));
        }

        @Override
        public boolean completesWithClaims() {
            return false;
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            claims.incrementAndGet();
            return store.claim(key, token, fingerprint, lease);
        }

        @Override
        public HolderResult extend(String key, String token, Duration lease) {
            if (failExtends.get()) {
                throw new ClaimStoreException("counting", "extend", new IOException("connection reset"));
            }
            HolderResult r = store.extend(key, token, lease);
            if (r == HolderResult.NOT_HOLDER) {
                extendsRefused.incrementAndGet();
            }
            return r;
        }

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public Optional<String> problem() {
            return Optional.empty();
        }

        @Override
        public void close() {
        }
    }
}
