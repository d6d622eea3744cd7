package dev.onceonly.internal.deadletter;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterPage;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.api.ReplayResult.Status;
import dev.onceonly.testing.InMemoryDeadLetters;
import dev.onceonly.testing.LogCapture;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static dev.onceonly.testing.InMemoryDeadLetters.letter;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dead-letter operations' own decisions, over a queue in memory ({@link InMemoryDeadLetters}):
 * paging and filtering, reading again for a letter another read holds, replaying (republished before
 * it is removed, verified or not as asked, the decision waited for or reported as published) and
 * discarding, and what their log lines show. {@code DeadLetterOperationsTest} runs them on RabbitMQ.
 */
class DeadLetterOperationsUnitTest {

    private static final DeadLetterFilter FAILED = new DeadLetterFilter("FAILED", null, null, null);

    private final InMemoryDeadLetters dlq = new InMemoryDeadLetters();
    private final DeadLetterOperations operations = new DeadLetterOperations(dlq,
            Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC));

    @Test
    void aPageHoldsTheMatchingLettersFromItsOffsetAndCountsTheMatchingAndAll() {
        dlq.add(letter("a", "FAILED", true), "a").add(letter("b", "CONFLICT", true), "b")
                .add(letter("c", "FAILED", true), "c").add(letter("d", "FAILED", true), "d");
        DeadLetterPage page = operations.list(FAILED, 1, 1);
        assertEquals(List.of("c"), page.letters().stream().map(DeadLetter::id).toList());
        assertEquals(3, page.matching());
        assertEquals(4, page.inQueue());
        assertEquals(List.of("a", "c", "d"), operations.list(FAILED, 0, 5).letters().stream().map(DeadLetter::id).toList());
        assertEquals(List.of(), operations.list(FAILED, 0, 0).letters());
        assertThrows(IllegalArgumentException.class, () -> operations.list(FAILED, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> operations.list(FAILED, 0, -1));
        assertEquals(List.of("a", "b", "c", "d"), dlq.ids(), "reading removes nothing");
        assertEquals(4, operations.count());
        assertEquals("orders", operations.channel());
        assertEquals("orders.dlq", operations.queue());
    }

    @Test
    void aLetterIsFoundWithItsBodyAsACopyAndAMissingOneAfterThreeReads() {
        dlq.add(letter("a", "FAILED", true), "body-a");
        assertEquals("a", operations.find("a").orElseThrow().id());
        byte[] body = operations.body("a").orElseThrow();
        assertEquals("body-a", new String(body, StandardCharsets.UTF_8));
        body[0] = 'X';
        assertArrayEquals("body-a".getBytes(StandardCharsets.UTF_8), operations.body("a").orElseThrow(),
                "the caller's copy, not the held message's body");
        int before = dlq.scans.get();
        assertEquals(Optional.empty(), operations.find("missing"));
        assertEquals(3, dlq.scans.get() - before, "read three times before taken for absent");
    }

    @Test
    void aLetterAnotherReadHoldsAtFirstIsFoundOnTheNextRead() {
        dlq.add(letter("a", "FAILED", true), "a").hidden.add("a");
        dlq.hiddenScans = 1;
        assertEquals("a", operations.find("a").orElseThrow().id());
        assertEquals(2, dlq.scans.get());
    }

    @Test
    void anInterruptedSearchStopsAfterItsFirstRead() {
        Thread.currentThread().interrupt();
        try {
            assertEquals(Optional.empty(), operations.find("missing"));
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the caller");
        } finally {
            Thread.interrupted();
        }
        assertEquals(1, dlq.scans.get());
    }

    @Test
    void aReplayIsRepublishedThenRemovedAndAnswersTheGuardsDecision() {
        dlq.add(letter("a", "FAILED", true), "a").add(letter("b", "FAILED", true), "b");
        dlq.onRepublish = id -> dlq.decide(id, Status.PROCESSED, "processed");
        try (LogCapture log = new LogCapture()) {
            ReplayResult r = operations.replay("b", Duration.ofSeconds(5));
            assertEquals(new ReplayResult("b", Status.PROCESSED, "processed"), r);
            String line = log.lines("ONCE0801I").get(0);
            assertTrue(line.contains("dead letter b of channel 'orders'") && line.contains("as the original (replay 1)"), line);
            assertTrue(line.contains("consumer 'inventory', key k-b, body sha256 abababababababab, outcome FAILED"), line);
        }
        assertEquals(List.of("b"), dlq.republished);
        assertEquals(List.of("a"), dlq.ids());
        assertEquals(Status.NOT_FOUND, operations.replay("b", Duration.ZERO).status());
    }

    /** The decision comes from the connector's thread while the operation waits: it is waited for. */
    @Test
    void aReplayWaitsForADecisionThatComesLater() throws Exception {
        dlq.add(letter("a", "FAILED", true), "a");
        ExecutorService connector = Executors.newSingleThreadExecutor();
        try {
            dlq.onRepublish = id -> connector.execute(() -> {
                try {
                    Thread.sleep(100); // after the operation began to wait, most likely; either way it is waited for
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                dlq.decide(id, Status.REFUSED, "CONFLICT");
            });
            assertEquals(Status.REFUSED, operations.replay("a", Duration.ofMinutes(1)).status());
        } finally {
            connector.shutdownNow();
        }
    }

    @Test
    void aDecisionNobodyWaitsForIsDropped() {
        dlq.decide("replayed-on-another-instance", Status.PROCESSED, "processed");
        dlq.add(letter("replayed-on-another-instance", "FAILED", true), "a");
        assertEquals(Status.PUBLISHED, operations.replay("replayed-on-another-instance", Duration.ZERO).status(),
                "not the decision on an earlier copy");
        assertEquals(List.of("replayed-on-another-instance"), dlq.ids(), "undecided, the letter stays");
    }

    /** Not decided in time, the letter stays: with it the purge's pin on its key's row, while its copy waits. */
    @Test
    void aReplayNotDecidedInTimeIsReportedPublishedAndItsLetterStays() {
        dlq.add(letter("a", "FAILED", true), "a");
        ReplayResult r = operations.replay("a", Duration.ZERO);
        assertEquals(Status.PUBLISHED, r.status());
        assertTrue(r.detail().contains("the dead letter stays"), r.detail());
        assertEquals(List.of("a"), dlq.ids());
        assertEquals(List.of("a"), dlq.republished);
    }

    @Test
    void aReplayWaitInterruptedIsReportedPublished() {
        dlq.add(letter("a", "FAILED", true), "a");
        Thread.currentThread().interrupt();
        try {
            assertEquals(Status.PUBLISHED, operations.replay("a", Duration.ofMinutes(5)).status());
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aReplayTheBrokerDidNotConfirmLeavesTheLetterWhereItWas() {
        dlq.add(letter("a", "FAILED", true), "a");
        dlq.refuseRepublish = true;
        try (LogCapture log = new LogCapture()) {
            assertThrows(OnceOnlyException.class, () -> operations.replay("a", Duration.ZERO));
            assertFalse(log.contains("ONCE0801I"));
        }
        assertEquals(List.of("a"), dlq.ids());
    }

    @Test
    void anUnverifiedLetterIsReplayedOnlyWhenAskedForAndAVerifiedOneOnlyAsTheOriginal() {
        dlq.add(letter("v", "FAILED", true), "v").add(letter("u", "", false), "u");
        ReplayResult unverified = operations.replay("u", Duration.ZERO);
        assertEquals(Status.NOT_REPLAYABLE, unverified.status());
        assertTrue(unverified.detail().startsWith("unverified: "), unverified.detail());
        ReplayResult verified = operations.replayUnverified("v", Duration.ZERO);
        assertEquals(Status.NOT_REPLAYABLE, verified.status());
        assertTrue(verified.detail().startsWith("the dead letter is verified"), verified.detail());
        assertEquals(List.of(), dlq.republished);
        try (LogCapture log = new LogCapture()) {
            assertEquals(Status.PUBLISHED, operations.replayUnverified("u", Duration.ZERO).status());
            String line = log.lines("ONCE0801I").get(0);
            assertTrue(line.contains("unverified, as a new message") && line.contains("outcome -"), line);
        }
        assertEquals(List.of("u"), dlq.republished);
        assertEquals(List.of("v", "u"), dlq.ids(), "the unverified letter stays until its replay is decided");
    }

    @Test
    void replayAllSendsTheMatchingVerifiedLettersAndAnswersEachInQueueOrder() {
        dlq.add(letter("a", "FAILED", true), "a").add(letter("b", "CONFLICT", true), "b")
                .add(letter("c", "FAILED", false), "c").add(letter("d", "FAILED", true), "d");
        dlq.onRepublish = id -> dlq.decide(id, Status.ALREADY_PROCESSED, "duplicate");
        List<ReplayResult> results = operations.replayAll(FAILED, Duration.ofSeconds(5));
        assertEquals(List.of("a", "c", "d"), results.stream().map(ReplayResult::id).toList());
        assertEquals(List.of(Status.ALREADY_PROCESSED, Status.NOT_REPLAYABLE, Status.ALREADY_PROCESSED),
                results.stream().map(ReplayResult::status).toList());
        assertEquals(List.of("a", "d"), dlq.republished);
        assertEquals(List.of("b", "c"), dlq.ids());
    }

    @Test
    void discardingRemovesForGoodAndSaysWhatItRemoved() {
        DeadLetter noKey = new DeadLetter("n", "orders", "", "", 0, "inventory", null, "", "abc", 1, 0, null, null, false);
        dlq.add(letter("a", "FAILED", true), "a").add(noKey, "n").add(letter("c", "CONFLICT", true), "c");
        try (LogCapture log = new LogCapture()) {
            assertEquals(Optional.of(noKey), operations.discard("n"));
            String line = log.lines("ONCE0802W").get(0);
            assertTrue(line.contains("dead letter n of channel 'orders' (consumer 'inventory', key -, body sha256 abc, outcome -)"),
                    line);
        }
        assertEquals(Optional.empty(), operations.discard("n"));
        assertEquals(List.of("c"), operations.discardAll(new DeadLetterFilter("CONFLICT", null, null, null)).stream()
                .map(DeadLetter::id).toList());
        assertEquals(List.of("a"), dlq.ids());
    }
}
