package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.deadletter.DeadLetterChannels;
import dev.onceonly.internal.deadletter.DeadLetterOperations;
import dev.onceonly.internal.ledger.LedgerPurge;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.TestRabbit;
import com.rabbitmq.client.Connection;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A dead letter leaves its queue only once the guard decided its replay, on whichever instance
 * consumed the copy: until then it stays where the ledger purge's pin sees it, so the row of its key
 * is kept however long the copy waits in the work queue; a replay dead-lettered again keeps the time
 * its letter was first dead-lettered at.
 */
class ReplayDecisionTest extends DeadLetterFixture {

    private ReplayResult decided(CompletableFuture<ReplayResult> replay) throws Exception {
        return replay.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    }

    /**
     * The letter's replay is taken by a consumer and not yet decided (a long work queue, a slow
     * handler) when the purge runs: the key's row, older than the retention and kept by the letter's
     * pin, must still be there when the copy is decided (issue 46: the replay removed the letter at
     * once, the pin went with it and the purge deleted the row, so a copy decided after would run
     * the key again).
     */
    @Test
    void aReplayInFlightStillKeepsItsKeysRow() throws Exception {
        DeadLetter letter = theOnlyDeadLetter("late", "dr");
        DeadLetterOperationsTest.Rows ledger = new DeadLetterOperationsTest.Rows(
                Map.of("dr", letter.deadLetteredAt().minusSeconds(60)));
        Clock later = Clock.offset(Clock.systemUTC(), Duration.ofHours(2));
        DeadLetterChannels queues = new DeadLetterChannels(() -> List.of(endpoint), Clock.systemUTC());
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try (LogCapture log = new LogCapture()) {
            CompletableFuture<ReplayResult> replay = CompletableFuture.supplyAsync(() -> operations.replay(letter.id(), LIMIT));
            Message<?> copy = probe.next();
            try (LedgerPurge purge = new LedgerPurge(ledger, Duration.ofHours(1), Duration.ofMillis(20), 100, later, scheduler,
                    queues::oldest)) {
                await("purge runs while the replay is in flight", LIMIT,
                        () -> ledger.runs() + log.lines("ONCE0805W").size(), n -> n >= 3);
            }
            assertTrue(ledger.has("dr"), "the row of the key whose replay is in flight is kept: " + log.lines());

            settle(copy, Outcome.DUPLICATE, "dr");
            assertEquals(ReplayResult.Status.ALREADY_PROCESSED, decided(replay).status());
        } finally {
            scheduler.shutdownNow();
        }
        await("the decided letter removed", LIMIT, () -> TestRabbit.total(dlq), n -> n == 0);
    }

    /**
     * A replay made where no connector consumes (the command line, another instance than the one
     * whose consumer takes the copy) is told the decision too.
     */
    @Test
    void aReplayFromAnotherProcessIsToldTheGuardsDecision() throws Exception {
        String id = theOnlyDeadLetter("elsewhere", "de").id();
        Connection own = resources.open(settings.connection(), "orders", "command-line");
        try {
            DeadLetterQueue commandLine = new DeadLetterOperations(DeadLetterEndpoint.of(settings, own::createChannel),
                    Clock.systemUTC());
            CompletableFuture<ReplayResult> replay = CompletableFuture.supplyAsync(() -> commandLine.replay(id, LIMIT));
            settle(probe.next(), Outcome.DUPLICATE, "de");

            assertEquals(ReplayResult.Status.ALREADY_PROCESSED, decided(replay).status());
        } finally {
            Connections.closeQuietly(own);
        }
        await("the decided letter removed", LIMIT, () -> TestRabbit.total(dlq), n -> n == 0);
    }

    /**
     * Not decided within the wait, the replay is reported published and its letter stays; replayed
     * again once the first copy was processed, the guard finds the key and the letter goes.
     */
    @Test
    void aReplayNotDecidedInTimeLeavesItsLetterAndAnotherIsSafe() throws Exception {
        String id = theOnlyDeadLetter("slow", "ds").id();

        ReplayResult first = operations.replay(id, Duration.ofMillis(300));
        assertEquals(ReplayResult.Status.PUBLISHED, first.status(), first.toString());
        assertEquals(1, TestRabbit.total(dlq), "the letter stays while its replay is undecided");
        settle(probe.next(), Outcome.PROCESSED, "ds");

        CompletableFuture<ReplayResult> again = CompletableFuture.supplyAsync(() -> operations.replay(id, LIMIT));
        settle(probe.next(), Outcome.DUPLICATE, "ds");
        assertEquals(ReplayResult.Status.ALREADY_PROCESSED, decided(again).status());
        await("the decided letter removed", LIMIT, () -> TestRabbit.total(dlq), n -> n == 0);
    }

    /**
     * A replay dead-lettered again keeps the time its letter was first dead-lettered at, which is
     * what the purge's pin keeps the key's row for: a new time would let the rows between the two go.
     */
    @Test
    void aReplayDeadLetteredAgainKeepsItsFirstTime() throws Exception {
        DeadLetter first = theOnlyDeadLetter("again", "da");
        Thread.sleep(5); // a new stamp would differ from the first by the milliseconds between
        CompletableFuture<ReplayResult> replay = CompletableFuture.supplyAsync(() -> operations.replay(first.id(), LIMIT));
        settle(probe.next(), Outcome.FAILED, "da");
        assertEquals(ReplayResult.Status.FAILED, decided(replay).status());

        await("dead-lettered again", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
        DeadLetter again = all().get(0);
        assertEquals(1, again.replays(), again.toString());
        assertTrue(again.verified(), again.toString());
        assertEquals(first.deadLetteredAt(), again.deadLetteredAt(), "the first time, carried by the replay");
    }
}
