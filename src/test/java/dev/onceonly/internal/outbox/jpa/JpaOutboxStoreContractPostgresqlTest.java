package dev.onceonly.internal.outbox.jpa;

import dev.onceonly.testing.ScratchDatabase;
import org.junit.jupiter.api.Test;

import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The outbox store contract on {@link JpaOutboxStore} and this machine's PostgreSQL, on a renamed table;
 * and what PostgreSQL's {@code on conflict do nothing} does with a row another transaction has not committed.
 */
class JpaOutboxStoreContractPostgresqlTest extends JpaOutboxStoreContractTestBase {

    @Override
    protected ScratchDatabase.Kind kind() {
        return ScratchDatabase.Kind.POSTGRESQL;
    }

    /** An append waits for the transaction that wrote its message id; that one commits: the append answers empty. */
    @Test
    void anAppendWaitsForAnUncommittedRowOfItsIdAndAnswersEmptyWhenItCommits() throws Exception {
        Race race = new Race("committed", true);
        assertEquals(OptionalLong.empty(), race.second.get(30, TimeUnit.SECONDS));
        assertEquals(race.first.get(30, TimeUnit.SECONDS), inNewTransaction(() -> store().find("committed/1")).orElseThrow().id());
    }

    /** An append waits for the transaction that wrote its message id; that one rolls back: the append writes. */
    @Test
    void anAppendWaitsForAnUncommittedRowOfItsIdAndWritesWhenItRollsBack() throws Exception {
        Race race = new Race("rolledBack", false);
        long written = race.second.get(30, TimeUnit.SECONDS).orElseThrow();
        assertThrows(ExecutionException.class, () -> race.first.get(30, TimeUnit.SECONDS));
        assertEquals(written, inNewTransaction(() -> store().find("rolledBack/1")).orElseThrow().id());
    }

    /**
     * Two transactions on two threads append the same message id: the first writes it and waits; the
     * second's append has waited for it 300 ms when the first ends (commits or rolls back).
     */
    private final class Race {
        final CompletableFuture<Long> first;
        final CompletableFuture<OptionalLong> second;

        Race(String source, boolean commits) throws Exception {
            CountDownLatch written = new CountDownLatch(1);
            CountDownLatch end = new CountDownLatch(1);
            first = CompletableFuture.supplyAsync(() -> inNewTransaction(() -> {
                long id = store().append(row(source, 1)).orElseThrow();
                written.countDown();
                try {
                    assertTrue(end.await(30, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (!commits) {
                    throw new IllegalStateException("the first transaction rolls back");
                }
                return id;
            }));
            assertTrue(written.await(30, TimeUnit.SECONDS));
            second = CompletableFuture.supplyAsync(() -> inNewTransaction(() -> store().append(row(source, 1))));
            Thread.sleep(300);
            assertFalse(second.isDone(), "the second append waits for the first transaction");
            end.countDown();
        }
    }
}
