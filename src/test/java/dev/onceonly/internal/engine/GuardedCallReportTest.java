package dev.onceonly.internal.engine;

import dev.onceonly.testing.Guarded;
import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a guarded call tells the listener (the metrics) besides its outcome: a lost lease once, and
 * which store operation failed. A runner that asks before committing, as a JTA transaction does.
 */
class GuardedCallReportTest {

    private final MutableClock clock = new MutableClock();
    private final InMemoryClaimStore store = new InMemoryClaimStore(1_000, clock);
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final List<String> reported = new CopyOnWriteArrayList<>();
    private final List<GuardEvent> events = new CopyOnWriteArrayList<>();
    private final GuardListener listener = new GuardListener() {
        @Override
        public void onOutcome(GuardEvent event) {
            events.add(event);
        }

        @Override
        public void onLeaseRenewed(String consumer) {
            reported.add("lease renewed " + consumer);
        }

        @Override
        public void onLeaseLost(String consumer) {
            reported.add("lease lost " + consumer);
        }

        @Override
        public void onStoreError(String consumer, String operation) {
            reported.add("store error " + consumer + " " + operation);
        }
    };
    private final TransactionRunner asking = new TransactionRunner() {
        @Override
        public <T> T run(Work<T> work, Completion completion) throws Exception {
            T result;
            try {
                result = work.call();
            } catch (Exception e) {
                completion.completed(false);
                throw e;
            }
            boolean commit = completion.mayCommit();
            completion.completed(commit);
            if (!commit) {
                throw new IllegalStateException("rolled back at commit");
            }
            return result;
        }
    };
    private final KeyDeriver keys = new KeyDeriver("oo:");
    private final GuardEngine engine = new GuardEngine(store, asking, null, scheduler, listener, keys);
    private final ConsumerSettings settings = Settings.defaults("orders", KeyStrategy.CONTENT);
    private final MessageView view = MessageView.of("orders", "order.placed", null, Map.of(), "m".getBytes(StandardCharsets.UTF_8));

    /** The store of {@link #sweeping}: fails every call while {@code down}. */
    private final StoreFailurePolicyTest.CountingStore failing = new StoreFailurePolicyTest.CountingStore(store);
    /** When leases fall due for {@link #sweeping}: held still unless a test moves it. */
    private final AtomicLong nanos = new AtomicLong();
    /** No ask before the commit (so a failing store fails the completion, not the commit), a sweep every 10 ms. */
    private final GuardEngine sweeping = new GuardEngine(failing, TransactionRunner.NONE, null, scheduler, listener, keys, nanos::get);
    private final ConsumerSettings shortLease = Settings.withLease(settings, Duration.ofMillis(60));
    private final LogCapture log = new LogCapture();

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
        log.close();
    }

    private String line(String id) throws Exception {
        return Eventually.await(id, Duration.ofSeconds(5),
                () -> log.lines().stream().filter(l -> l.startsWith(id)).findFirst().orElse(null), Objects::nonNull);
    }

    private void awaitReported(String what) throws Exception {
        Eventually.await(what, Duration.ofSeconds(5), () -> List.copyOf(reported), r -> r.contains(what));
    }

    /** {@return the state a later copy of the message finds in the store} */
    private ClaimState stateOfTheKey() {
        MessageKey key = keys.derive(settings, view, null);
        return store.claim(key.storeKey(), "probe", key.fingerprint(), settings.lease()).state();
    }

    /**
     * Committed, but the store failed to mark the key done: reported PROCESSED all the same, and the
     * sweep retries the mark until the store answers; the call is unfinished (close waits) until then.
     */
    @Test
    void aCompletionThatFailedIsRetriedByTheSweepUntilTheStoreAnswers() throws Exception {
        assertEquals("effect", Guarded.call(sweeping, shortLease, Dispatch.of(view), null, () -> {
            failing.down = true;
            return "effect";
        }));
        assertEquals(Outcome.PROCESSED, events.get(0).outcome());
        assertTrue(line("ONCE0106W").startsWith("ONCE0106W: Could not mark the key of consumer 'orders'"));
        assertEquals(List.of("store error orders complete"), reported);
        assertEquals(1, sweeping.inFlight(), "not finished while the mark is pending");

        nanos.set(Duration.ofMillis(100).toNanos()); // due, and within the ten leases it is retried for
        Eventually.await("a retry that failed", Duration.ofSeconds(5), () -> List.copyOf(reported), r -> r.size() >= 2);
        failing.down = false;
        assertTrue(line("ONCE0108I").startsWith("ONCE0108I: Marked the key of consumer 'orders'"));
        Eventually.await("the call finished", Duration.ofSeconds(5), sweeping::inFlight, n -> n == 0);
        assertEquals(ClaimState.DONE, stateOfTheKey());
        assertFalse(reported.contains("lease lost orders"));
        assertFalse(log.contains("ONCE0107W"));
    }

    /** Still failing ten leases after the commit: given up (a later copy is stopped only by a ledger), the call finished. */
    @Test
    void aCompletionStillFailingAfterTenLeasesIsGivenUp() throws Exception {
        Guarded.call(sweeping, shortLease, Dispatch.of(view), null, () -> {
            failing.down = true;
            return "effect";
        });
        nanos.set(Duration.ofMillis(60 * 10).toNanos());
        assertTrue(line("ONCE0107W").startsWith("ONCE0107W: Gave up marking the key of consumer 'orders'"));
        Eventually.await("the call finished", Duration.ofSeconds(5), sweeping::inFlight, n -> n == 0);
        int errors = reported.size();
        Thread.sleep(100);
        assertEquals(errors, reported.size(), "no longer retried");
        assertFalse(log.contains("ONCE0108I"));
    }

    /**
     * Retried after a failure: the key found done with this message's fingerprint is taken as done
     * (most likely by the attempt whose reply was lost), not as a lost lease.
     */
    @Test
    void aRetriedCompletionThatFindsTheKeyDoneWithItsFingerprintTakesItAsDone() throws Exception {
        MessageKey key = keys.derive(settings, view, null);
        Guarded.call(sweeping, shortLease, Dispatch.of(view), null, () -> {
            failing.down = true;
            return "effect";
        });
        clock.advance(Duration.ofSeconds(1)); // the claim lapsed; its mark was written meanwhile
        store.claim(key.storeKey(), "reply-lost", key.fingerprint(), settings.lease());
        store.complete(key.storeKey(), "reply-lost", key.fingerprint(), settings.retention());
        failing.down = false;
        nanos.set(Duration.ofMillis(100).toNanos());
        line("ONCE0108I");
        Eventually.await("the call finished", Duration.ofSeconds(5), sweeping::inFlight, n -> n == 0);
        assertFalse(reported.contains("lease lost orders"));
        assertFalse(log.contains("ONCE0103W"));
    }

    /**
     * On the consumer's thread the same find is a lost claim: nothing failed before, so a key done
     * by someone else is not this message's mark.
     */
    @Test
    void aFirstCompletionThatFindsTheKeyDoneReportsTheClaimLost() throws Exception {
        MessageKey key = keys.derive(settings, view, null);
        Guarded.call(sweeping, shortLease, Dispatch.of(view), null, () -> {
            clock.advance(Duration.ofSeconds(1));
            store.claim(key.storeKey(), "second", key.fingerprint(), settings.lease());
            store.complete(key.storeKey(), "second", key.fingerprint(), settings.retention());
            return "effect";
        });
        assertEquals(List.of("lease lost orders"), reported);
        assertTrue(log.contains("ONCE0103W"));
        assertEquals(0, sweeping.inFlight());
    }

    /** Committed after the claim lapsed and nobody took it: taken again and marked done, so a copy is a duplicate. */
    @Test
    void aCommittedMessageWhoseClaimLapsedIsTakenAgainAndMarkedDone() throws Exception {
        assertEquals("effect", Guarded.call(sweeping, settings, Dispatch.of(view), null, () -> {
            clock.advance(settings.lease().plusSeconds(1));
            return "effect";
        }));
        assertEquals(List.of(), reported, "nothing lost");
        assertEquals(ClaimState.DONE, stateOfTheKey());
        assertEquals(0, sweeping.inFlight());
    }

    /** While the handler runs, the sweep renews its lease and says so; a renewal the store failed is reported and retried. */
    @Test
    void theSweepRenewsTheLeaseOfARunningHandlerAndReportsAFailedRenewal() throws Exception {
        assertEquals("effect", Guarded.call(sweeping, shortLease, Dispatch.of(view), null, () -> {
            nanos.set(Duration.ofMillis(100).toNanos());
            awaitReported("lease renewed orders");
            nanos.set(Duration.ofMillis(200).toNanos()); // due again: renewed at 100 ms for a third of the lease
            failing.down = true;
            awaitReported("store error orders extend");
            assertTrue(line("ONCE0202W").startsWith("ONCE0202W: Lease renewal failed for consumer 'orders'"));
            failing.down = false;
            int renewed = (int) reported.stream().filter("lease renewed orders"::equals).count();
            Eventually.await("a renewal after the failure", Duration.ofSeconds(5),
                    () -> reported.stream().filter("lease renewed orders"::equals).count(), n -> n > renewed);
            return "effect";
        }));
        assertEquals(Outcome.PROCESSED, events.get(0).outcome());
        assertFalse(reported.contains("lease lost orders"));
        assertEquals(ClaimState.DONE, stateOfTheKey());
    }

    /** Renewal finds the claim taken: reported lost once (renewal and completion), logged ONCE0201W, no longer renewed. */
    @Test
    void aLeaseTheRenewalFindsTakenIsReportedLostOnceAndNoLongerRenewed() throws Exception {
        MessageKey key = keys.derive(settings, view, null);
        Guarded.call(sweeping, shortLease, Dispatch.of(view), null, () -> {
            clock.advance(Duration.ofSeconds(1));
            store.claim(key.storeKey(), "second", key.fingerprint(), settings.lease());
            nanos.set(Duration.ofMillis(100).toNanos());
            awaitReported("lease lost orders");
            int seen = reported.size();
            nanos.set(Duration.ofMillis(200).toNanos());
            Thread.sleep(100);
            assertEquals(seen, reported.size(), "a lost lease is not renewed again");
            return "effect";
        });
        assertTrue(line("ONCE0201W").startsWith("ONCE0201W: Lease lost for consumer 'orders'"));
        assertEquals(1, reported.stream().filter("lease lost orders"::equals).count(), reported.toString());
        assertFalse(reported.contains("lease renewed orders"));
    }

    /** Paused past the lease while another holder took the key: refused at commit, the lease reported lost once. */
    @Test
    void aClaimTakenOverBeforeTheCommitIsReportedLostOnce() {
        MessageKey key = keys.derive(settings, view, null);
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> Guarded.call(engine, settings, Dispatch.of(view), null, () -> {
            clock.advance(settings.lease().plusSeconds(1));
            assertEquals(ClaimState.ACQUIRED, store.claim(key.storeKey(), "second", key.fingerprint(), settings.lease()).state());
            return "effect";
        }));
        assertEquals(Outcome.RETRY, e.outcome());
        assertEquals("the claim was taken over before commit", e.reason());
        assertEquals(List.of("lease lost orders"), reported, "the refused commit and the fenced release: one report");
        assertEquals(Layer.CLAIM_STORE, events.get(0).layer());
    }

    /** A failing handler whose claim lapsed and was taken meanwhile: its release is fenced off and the lease reported lost. */
    @Test
    void aFailureWhoseClaimWasTakenMeanwhileReportsTheLostLease() {
        MessageKey key = keys.derive(settings, view, null);
        assertThrows(IllegalStateException.class, () -> Guarded.call(engine, settings, Dispatch.of(view), null, () -> {
            clock.advance(settings.lease().plusSeconds(1));
            store.claim(key.storeKey(), "second", key.fingerprint(), settings.lease());
            throw new IllegalStateException("boom");
        }));
        assertEquals(List.of("lease lost orders"), reported);
        assertEquals(Outcome.FAILED, events.get(0).outcome());
    }

    /** Nobody held the lapsed claim: taken again before the commit, nothing lost to report. */
    @Test
    void aLapsedClaimNobodyTookIsTakenAgainWithoutAReport() throws Exception {
        assertEquals("effect", Guarded.call(engine, settings, Dispatch.of(view), null, () -> {
            clock.advance(settings.lease().plusSeconds(1));
            return "effect";
        }));
        assertEquals(List.of(), reported);
        assertEquals(Outcome.PROCESSED, events.get(0).outcome());
    }
}
