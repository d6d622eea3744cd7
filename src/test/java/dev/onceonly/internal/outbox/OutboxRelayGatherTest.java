package dev.onceonly.internal.outbox;

import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.MutableClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fast path's gather: a relay transaction starts no sooner than {@code gather} after the last one
 * ended, with the rows committed until then; a row committed after the relay was idle for longer, or a
 * whole batch, goes out at once. The store here only records which rows each fast-path transaction
 * took and holds it until the test lets it finish, and the clock the gather is measured on moves only
 * when the test moves it, so what "during a transaction" and "idle" mean is the test's choice.
 */
class OutboxRelayGatherTest {

    private static final Duration LONG = Duration.ofHours(1);

    private final ThreadPoolExecutor executor = (ThreadPoolExecutor) Executors.newCachedThreadPool();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final HoldingStore store = new HoldingStore();
    private final MutableClock clock = new MutableClock();

    @AfterEach
    void stop() {
        store.finishing.release(1_000);
        executor.shutdownNow();
        scheduler.shutdownNow();
    }

    @Test
    void rowsCommittedDuringATransactionWaitTheGatherForMoreAndGoOutTogether() throws Exception {
        try (OutboxRelay relay = relay(Duration.ofMillis(500))) {
            relay.committed(List.of(1L));
            store.awaitTransactions(1);
            relay.committed(List.of(2L));
            relay.committed(List.of(3L));
            store.finishing.release(); // [1] ends with [2, 3] waiting: the next transaction waits the gather
            relay.committed(List.of(4L));
            store.awaitTransactions(2);
            store.finishing.release();
            assertEquals(List.of(List.of(1L), List.of(2L, 3L, 4L)), store.transactions());
        }
    }

    @Test
    void withoutAGatherTheNextTransactionTakesWhatWaitsAtOnce() throws Exception {
        try (OutboxRelay relay = relay(Duration.ZERO)) {
            relay.committed(List.of(1L));
            store.awaitTransactions(1);
            relay.committed(List.of(2L));
            relay.committed(List.of(3L));
            store.finishing.release();
            store.awaitTransactions(2); // took [2, 3] before 4 was committed
            relay.committed(List.of(4L));
            store.finishing.release();
            store.awaitTransactions(3);
            store.finishing.release();
            assertEquals(List.of(List.of(1L), List.of(2L, 3L), List.of(4L)), store.transactions());
        }
    }

    @Test
    void rowsCommittedSoonAfterATransactionWaitTheGatherAndGoOutTogether() throws Exception {
        try (OutboxRelay relay = relay(Duration.ofMillis(500))) {
            relay.committed(List.of(1L));
            store.awaitTransactions(1);
            store.finishing.release();
            awaitWorkerStopped(1);
            relay.committed(List.of(2L)); // the clock has not moved: the last transaction ended just now
            relay.committed(List.of(3L));
            store.awaitTransactions(2);
            store.finishing.release();
            assertEquals(List.of(List.of(1L), List.of(2L, 3L)), store.transactions());
        }
    }

    @Test
    void theFirstRowGoesOutWithoutWaiting() throws Exception {
        try (OutboxRelay relay = relay(LONG)) {
            relay.committed(List.of(1L));
            store.awaitTransactions(1); // long before an hour's gather would have ended
            store.finishing.release();
            assertEquals(List.of(List.of(1L)), store.transactions());
        }
    }

    @Test
    void aRowCommittedAfterTheRelayWasIdleForAGatherGoesOutWithoutWaiting() throws Exception {
        try (OutboxRelay relay = relay(LONG)) {
            relay.committed(List.of(1L));
            store.awaitTransactions(1);
            store.finishing.release();
            awaitWorkerStopped(1);
            clock.advance(LONG);
            relay.committed(List.of(2L));
            store.awaitTransactions(2); // at once, though the gather is an hour
            store.finishing.release();
            assertEquals(List.of(List.of(1L), List.of(2L)), store.transactions());
        }
    }

    @Test
    void aFullBatchWaitingDoesNotWaitTheGather() throws Exception {
        try (OutboxRelay relay = relay(LONG)) {
            relay.committed(List.of(1L));
            store.awaitTransactions(1);
            relay.committed(List.of(2L, 3L, 4L, 5L)); // a whole batch (4)
            store.finishing.release();
            store.awaitTransactions(2);
            store.finishing.release();
            assertEquals(List.of(List.of(1L), List.of(2L, 3L, 4L, 5L)), store.transactions());
        }
    }

    @Test
    void closingDuringAGatherEndsItAndLeavesItsRowsPending() throws Exception {
        OutboxRelay relay = relay(LONG);
        relay.committed(List.of(1L));
        store.awaitTransactions(1);
        relay.committed(List.of(2L));
        store.finishing.release(); // the worker now waits an hour for more
        // close() waits for a worker that holds rows as long as confirmWait (an hour here): it must not wait for this one.
        assertTimeoutPreemptively(Duration.ofSeconds(10), relay::close);
        assertEquals(List.of(List.of(1L)), store.transactions(), "row 2 stays pending for the sweep of the next start");
    }

    /**
     * A scheduler may drop the gather's task: a managed executor cancels or aborts it (its context
     * gone) without running it. The fast path must not then wait for it for ever: the next commit
     * starts the worker, rather than every row after it waiting for the sweep.
     */
    @Test
    void aGatherTheSchedulerDroppedDoesNotStopTheFastPath() throws Exception {
        ScheduledExecutorService dropping = new java.util.concurrent.ScheduledThreadPoolExecutor(1) {
            @Override
            public java.util.concurrent.ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
                java.util.concurrent.ScheduledFuture<?> never = super.schedule(() -> { }, 1, TimeUnit.HOURS);
                never.cancel(false);
                return never;
            }
        };
        try (OutboxRelay relay = new OutboxRelay(store, new AlwaysConnected(), new OutboxRelay.Settings(LONG, LONG, 4, 5, LONG,
                Duration.ofSeconds(1), Duration.ofMillis(500)), clock, executor, dropping, OutboxListener.NONE)) {
            relay.committed(List.of(1L));
            store.awaitTransactions(1);
            store.finishing.release();
            awaitWorkerStopped(1);
            relay.committed(List.of(2L)); // within the gather: its task is dropped
            clock.advance(Duration.ofSeconds(1));
            relay.committed(List.of(3L));
            store.awaitTransactions(2);
            store.finishing.release();
            assertEquals(List.of(List.of(1L), List.of(2L, 3L)), store.transactions());
        } finally {
            dropping.shutdownNow();
        }
    }

    private void awaitWorkerStopped(long runs) throws Exception {
        Eventually.await("the worker stopped", Duration.ofSeconds(10), executor::getCompletedTaskCount, n -> n == runs);
    }

    private OutboxRelay relay(Duration gather) {
        return new OutboxRelay(store, new AlwaysConnected(), new OutboxRelay.Settings(LONG, LONG, 4, 5, LONG, LONG, gather),
                clock, executor, scheduler, OutboxListener.NONE);
    }

    /** Records each fast-path transaction's rows and holds it until {@link #finishing} lets it end; sweeps find nothing. */
    private static final class HoldingStore implements OutboxStore {
        final Semaphore finishing = new Semaphore(0);
        private final Semaphore started = new Semaphore(0);
        private final List<List<Long>> taken = Collections.synchronizedList(new ArrayList<>());

        @Override
        public Relayed relay(Selection selection, Function<List<OutboxRecord>, Map<Long, Optional<Failure>>> publish,
                             int maxAttempts, Instant now) {
            if (selection.ids().isEmpty()) {
                return Relayed.NONE; // the sweep
            }
            taken.add(List.copyOf(selection.ids()));
            started.release();
            finishing.acquireUninterruptibly();
            return new Relayed(selection.ids().size(), selection.ids().stream().mapToLong(Long::longValue).max().orElse(0));
        }

        void awaitTransactions(int n) throws InterruptedException {
            assertTrue(started.tryAcquire(10, TimeUnit.SECONDS), "relay transaction " + n + " started");
            assertEquals(n, taken.size());
        }

        List<List<Long>> transactions() {
            return List.copyOf(taken);
        }

        @Override
        public OptionalLong append(OutboxRecord record) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<OutboxRecord> find(String messageId) {
            return Optional.empty();
        }

        @Override
        public long purge(Instant olderThan, int batchSize) {
            return 0;
        }

        @Override
        public Counts counts() {
            return new Counts(0, 0);
        }

        @Override
        public void checkReady() {
        }
    }

    private static final class AlwaysConnected implements OutboxPublisher {
        @Override
        public CompletableFuture<Void> publish(OutboxRecord record) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public boolean connected() {
            return true;
        }
    }
}
