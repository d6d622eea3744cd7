package dev.onceonly.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Layer;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    /** Paused past the lease while another holder took the key: refused at commit, the lease reported lost once. */
    @Test
    void aClaimTakenOverBeforeTheCommitIsReportedLostOnce() {
        MessageKey key = keys.derive(settings, view, null);
        MessageRefusedException e = assertThrows(MessageRefusedException.class, () -> engine.guard(settings, Dispatch.of(view), null, () -> {
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
        assertThrows(IllegalStateException.class, () -> engine.guard(settings, Dispatch.of(view), null, () -> {
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
        assertEquals("effect", engine.guard(settings, Dispatch.of(view), null, () -> {
            clock.advance(settings.lease().plusSeconds(1));
            return "effect";
        }));
        assertEquals(List.of(), reported);
        assertEquals(Outcome.PROCESSED, events.get(0).outcome());
    }
}
