package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterPage;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.deadletter.DeadLetterAccess;
import dev.onceonly.internal.deadletter.DeadLetterChannels;
import dev.onceonly.internal.deadletter.DeadLetterOperations;
import dev.onceonly.internal.ledger.LedgerPurge;
import dev.onceonly.spi.Ledger;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import dev.onceonly.rabbitmq.RabbitHeaders;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.TestRabbit;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dead-letter operations against the machine's RabbitMQ, on dead letters the connector itself
 * made: an incoming channel dead-letters refused messages, the operations read, replay and discard
 * them, and the same channel consumes the replays and reports the guard's decisions on them.
 */
class DeadLetterOperationsTest extends DeadLetterFixture {

    @Test
    void listsAndShowsDeadLettersWithoutTakingThemAndShowsTheBodyOnlyWhenAsked() throws Exception {
        Instant before = Instant.now().minusSeconds(1);
        deadLetter("{\"order\":1}", Outcome.REJECTED, "");
        deadLetter("{\"order\":2}", Outcome.CONFLICT, "k2digest");
        deadLetter("{\"order\":3}", Outcome.FAILED, "k3digest");
        await("three dead letters", LIMIT, () -> TestRabbit.total(dlq), n -> n == 3);

        List<DeadLetter> letters = all();

        assertEquals(3, letters.size(), letters.toString());
        assertEquals(3, TestRabbit.total(dlq), "reading takes nothing away");
        assertEquals(3, operations.count());
        DeadLetter conflict = letters.stream().filter(l -> l.outcome().equals("CONFLICT")).findFirst().orElseThrow();
        assertEquals("inventory", conflict.consumer());
        assertEquals("k2digest", conflict.keyDigest());
        assertEquals("processed before with another body", conflict.reason());
        assertEquals(1, conflict.attempts());
        assertEquals(DeadLetterEndpoint.sha256("{\"order\":2}".getBytes(StandardCharsets.UTF_8)), conflict.bodySha256());
        assertEquals(11, conflict.bodyBytes());
        assertEquals("orders", conflict.channel());
        assertTrue(conflict.replayable() && conflict.exchange().isEmpty() && conflict.routingKey().equals(queue), conflict.toString());
        assertTrue(!conflict.deadLetteredAt().isBefore(before) && !conflict.deadLetteredAt().isAfter(Instant.now()), conflict.toString());
        assertFalse(conflict.toString().contains("\"order\":2"), "no body in what is shown: " + conflict);
        DeadLetter failed = letters.stream().filter(l -> l.outcome().equals("FAILED")).findFirst().orElseThrow();
        assertTrue(failed.reason().contains("IllegalStateException: stock service down"), failed.reason());

        assertEquals(Optional.of(conflict), operations.find(conflict.id()));
        assertArrayEquals("{\"order\":2}".getBytes(StandardCharsets.UTF_8), operations.body(conflict.id()).orElseThrow());
        assertEquals(Optional.empty(), operations.find("no-such-id"));

        DeadLetterPage page = operations.list(DeadLetterFilter.ALL, 1, 1);
        assertEquals(List.of(letters.get(1)), page.letters());
        assertEquals(3, page.matching());
        assertEquals(3, page.inQueue());
        assertEquals(List.of(failed), operations.list(new DeadLetterFilter("failed", null, null, null), 0, 10).letters());
        assertEquals(List.of(failed), operations.list(new DeadLetterFilter(null, "SERVICE DOWN", "inventory", null), 0, 10).letters());
        assertEquals(0, operations.list(new DeadLetterFilter(null, null, null, Duration.ofHours(1)), 0, 10).matching());
        assertEquals(3, TestRabbit.total(dlq), "still every one there");
    }

    /**
     * A replay goes back to its original exchange and routing key, marked as a replay, and comes
     * back to the guard: each of its decisions is what the replay reports, and a refusal puts it
     * back in the dead-letter queue with the reason and its replay counted.
     */
    @Test
    void replaysReportTheGuardsDecisionOnThem() throws Exception {
        deadLetter("one", Outcome.FAILED, "d1");
        deadLetter("two", Outcome.FAILED, "d2");
        deadLetter("three", Outcome.FAILED, "d3");
        await("three dead letters", LIMIT, () -> TestRabbit.total(dlq), n -> n == 3);
        List<DeadLetter> letters = all();

        try (LogCapture log = new LogCapture()) {
            assertEquals(new ReplayResult(letters.get(0).id(), ReplayResult.Status.PROCESSED, "processed"),
                    replayAndDecide(letters.get(0), Outcome.PROCESSED));
            ReplayResult duplicate = replayAndDecide(letters.get(1), Outcome.DUPLICATE);
            assertEquals(ReplayResult.Status.ALREADY_PROCESSED, duplicate.status(), duplicate.toString());
            assertTrue(log.lines("ONCE0803I").stream().anyMatch(l -> l.contains(letters.get(1).id()) && l.contains("ALREADY_PROCESSED")
                    && l.contains("key d2")), log.lines().toString());
            ReplayResult conflict = replayAndDecide(letters.get(2), Outcome.CONFLICT);
            assertEquals(ReplayResult.Status.REFUSED, conflict.status(), conflict.toString());
            assertTrue(conflict.detail().startsWith("CONFLICT: processed before with another body"), conflict.detail());
            assertTrue(log.lines("ONCE0801I").size() == 3, log.lines().toString());
        }
        await("the refused replay dead-lettered again", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
        DeadLetter again = all().get(0);
        assertEquals("CONFLICT", again.outcome());
        assertEquals(1, again.replays(), "the replay is counted on the dead letter");
        assertFalse(again.id().equals(letters.get(2).id()), "a new dead letter, with an id of its own");
    }

    /** Replays {@code letter} on another thread, the guard deciding {@code outcome} on the copy, and returns the replay's report. */
    private ReplayResult replayAndDecide(DeadLetter letter, Outcome outcome) throws Exception {
        CompletableFuture<ReplayResult> replay = CompletableFuture.supplyAsync(() -> operations.replay(letter.id(), LIMIT));
        Message<?> copy = probe.next();
        Map<String, Object> headers = copy.getMetadata(IncomingRabbitMetadata.class).orElseThrow().headers();
        assertEquals(letter.id(), headers.get(RabbitHeaders.REPLAY_OF).toString());
        assertEquals(letter.replays() + 1, ((Number) headers.get(RabbitHeaders.REPLAYS)).intValue());
        assertFalse(headers.containsKey(RabbitHeaders.OUTCOME), "a replay is a delivery like the first: " + headers);
        settle(copy, outcome, letter.keyDigest());
        return replay.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    }

    /**
     * The dead letter is removed only after the broker confirmed its replay: a crash in between (the
     * operation's channel gone) leaves it in the queue, and the copy is delivered; replayed
     * again, the guard finds the key processed and the second copy is a duplicate.
     */
    @Test
    void aCrashBetweenTheReplayAndTheRemovalLosesNothing() throws Exception {
        String id = theOnlyDeadLetter("crash", "dc").id();
        DeadLetterAccess crashing = new DeadLetterAccess() {
            @Override
            public String channel() {
                return endpoint.channel();
            }

            @Override
            public String queue() {
                return endpoint.queue();
            }

            @Override
            public int count() {
                return endpoint.count();
            }

            @Override
            public Scan scanAlone() {
                throw new UnsupportedOperationException("the purge's, not a replay's");
            }

            @Override
            public Scan scan() {
                Scan scan = endpoint.scan();
                return new Scan() {
                    @Override
                    public Held next() {
                        return scan.next();
                    }

                    @Override
                    public void republish(Held held) {
                        scan.republish(held);
                        try {
                            lastOpened.get().abort(); // the operation dies after the confirm, before the removal
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                        throw new OnceOnlyException("crashed");
                    }

                    @Override
                    public ReplayResult decision(Duration within) {
                        return scan.decision(within);
                    }

                    @Override
                    public void remove(Held held) {
                        scan.remove(held);
                    }

                    @Override
                    public void close() {
                        scan.close();
                    }
                };
            }
        };

        assertThrows(OnceOnlyException.class, () -> new DeadLetterOperations(crashing, Clock.systemUTC()).replay(id, Duration.ZERO));

        Message<?> first = probe.next();
        settle(first, Outcome.PROCESSED, "dc");
        await("the dead letter back in its queue", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
        assertEquals(id, all().get(0).id());
        ReplayResult second = replayAndDecide(all().get(0), Outcome.DUPLICATE);
        assertEquals(ReplayResult.Status.ALREADY_PROCESSED, second.status());
        await("the dead letter gone", LIMIT, () -> TestRabbit.total(dlq), n -> n == 0);
    }

    @Test
    void discardsOneOrAllMatchingAndKeepsWhatCannotBeReplayed() throws Exception {
        deadLetter("a", Outcome.REJECTED, "");
        deadLetter("b", Outcome.FAILED, "db");
        deadLetter("c", Outcome.FAILED, "dc");
        rabbit.publish("", dlq, "dead-lettered by the broker, without the connector's headers");
        await("four dead letters", LIMIT, () -> TestRabbit.total(dlq), n -> n == 4);
        // Found by what they are, not by position: the connector dead-letters asynchronously (publish,
        // confirm, then ack), so the broker's own publish may overtake one of them.
        List<DeadLetter> letters = all();
        DeadLetter foreign = letters.stream().filter(l -> l.id().startsWith("sha256:")).findFirst().orElseThrow();
        assertTrue(!foreign.replayable() && foreign.deadLetteredAt() == null, foreign.toString());
        DeadLetter rejected = letters.stream().filter(l -> "REJECTED".equals(l.outcome())).findFirst().orElseThrow();
        List<DeadLetter> failed = letters.stream().filter(l -> "FAILED".equals(l.outcome())).toList();
        assertEquals(2, failed.size(), letters.toString());

        assertEquals(ReplayResult.Status.NOT_REPLAYABLE, operations.replay(foreign.id(), Duration.ZERO).status());
        assertEquals(ReplayResult.Status.NOT_FOUND, operations.replay("no-such-id", Duration.ZERO).status());
        assertEquals(Optional.of(rejected), operations.discard(rejected.id()));
        assertEquals(failed, operations.discardAll(new DeadLetterFilter("FAILED", null, null, null)));
        assertEquals(List.of(foreign), all());
        assertEquals(1, TestRabbit.total(dlq));
    }

    @Test
    void theOldestDeadLetterIsWhatTheLedgerKeepsRowsFor() throws Exception {
        DeadLetterChannels queues = new DeadLetterChannels(() -> List.of(endpoint), Clock.systemUTC());
        assertEquals(Optional.empty(), queues.oldest());
        assertEquals(List.of("orders"), queues.channels());
        assertThrows(IllegalArgumentException.class, () -> queues.channel("payments"));
        Instant before = Instant.now().minusSeconds(1);
        deadLetter("old", Outcome.FAILED, "");
        deadLetter("new", Outcome.FAILED, "");
        rabbit.publish("", dlq, "time unknown: holds nothing back");
        await("three dead letters", LIMIT, () -> TestRabbit.total(dlq), n -> n == 3);

        Instant oldest = queues.oldest().orElseThrow();

        assertEquals(all().get(0).deadLetteredAt(), oldest);
        assertTrue(oldest.isAfter(before), oldest.toString());
        assertEquals(3, TestRabbit.total(dlq));
    }

    /**
     * Hole 2 of issue 46: a dead letter another read holds (an operator's list, another instance's
     * purge, the command line) is not returned to the purge's own scan; the purge must not take the
     * queue for empty and delete the row of that letter's key.
     */
    @Test
    void aDeadLetterAnotherReadHoldsStillKeepsItsKeysRow() throws Exception {
        DeadLetterChannels queues = new DeadLetterChannels(() -> List.of(endpoint), Clock.systemUTC());
        Instant deadLettered = theOnlyDeadLetter("held", "dh").deadLetteredAt();
        // The key's row, written just before its message was dead-lettered; the purge runs two hours
        // later with a retention of one hour: only the dead letter's pin keeps the row.
        Rows ledger = new Rows(Map.of("dh", deadLettered.minusSeconds(60)));
        Clock later = Clock.offset(Clock.systemUTC(), Duration.ofHours(2));
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        try (LogCapture log = new LogCapture()) {
            try (DeadLetterAccess.Scan another = endpoint.scan()) {
                assertNotNull(another.next(), "another read holds the dead letter");
                try (LedgerPurge purge = new LedgerPurge(ledger, Duration.ofHours(1), Duration.ofMillis(20), 100, later, scheduler,
                        queues::oldest)) {
                    await("a purge run while the dead letter is held", LIMIT, () -> ledger.runs() + log.lines("ONCE0805W").size(),
                            n -> n >= 3);
                }
            }
            assertTrue(ledger.has("dh"), "the row of the held dead letter's key is kept: " + log.lines());
            try (LedgerPurge purge = new LedgerPurge(ledger, Duration.ofHours(1), Duration.ofMillis(20), 100, later, scheduler,
                    queues::oldest)) {
                await("a purge run once the read gave it back", LIMIT, ledger::runs, n -> n >= 1);
            }
            assertTrue(ledger.has("dh"), "seen again, the dead letter pins its row: " + log.lines());
            assertFalse(log.lines("ONCE0804I").isEmpty(), log.lines().toString());
        } finally {
            scheduler.shutdownNow();
        }
        assertEquals(1, TestRabbit.total(dlq), "the purge's reads take nothing away");
    }

    /**
     * Hole 3 of issue 46: a replay went back to the original exchange, so every queue bound there
     * (another application's) got the message a second time. It goes to the channel's own queue
     * only, and still keys as the original did: same exchange, routing key and body, a first attempt.
     */
    @Test
    void aReplayReachesTheChannelsOwnQueueOnlyAndKeysAsTheOriginal() throws Exception {
        String exchange = queue + ".x";
        String other = queue + ".other-application";
        try (Channel admin = operationsConnection.createChannel()) {
            admin.exchangeDeclare(exchange, "direct", false, true, null);
            admin.queueDeclare(other, false, false, true, null);
            admin.queueBind(queue, exchange, "order.placed");
            admin.queueBind(other, exchange, "order.placed");
            try {
                rabbit.publish(exchange, "order.placed", "{\"order\":7}");
                Message<?> first = probe.next();
                IncomingRabbitMetadata original = first.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
                settle(first, Outcome.FAILED, "d7");
                await("the dead letter", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
                DeadLetter letter = all().get(0);
                assertEquals(exchange, letter.exchange());

                CompletableFuture<ReplayResult> replay = CompletableFuture.supplyAsync(() -> operations.replay(letter.id(), LIMIT));
                Message<?> copy = probe.next();
                IncomingRabbitMetadata replayed = copy.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
                settle(copy, Outcome.DUPLICATE, "d7");
                assertEquals(ReplayResult.Status.ALREADY_PROCESSED, replay.get(LIMIT.toSeconds(), TimeUnit.SECONDS).status());

                assertEquals(List.of(original.exchange(), original.routingKey(), 1),
                        List.of(replayed.exchange(), replayed.routingKey(), replayed.attempt()), "the replay keys as the original");
                assertArrayEquals(original.body(), replayed.body());
                assertEquals(1, TestRabbit.total(other), "the other application's queue got the original only, not the replay");
            } finally {
                admin.queueDelete(other);
                admin.exchangeDelete(exchange);
            }
        }
    }

    /**
     * Hole 8 of issue 46: dead-letter headers were believed unsigned. A letter planted on the
     * dead-letter queue with the connector's headers (dead-lettered at 0, a stranger's exchange)
     * neither holds the purge back nor is replayed by {@code replayAll}; the connector's own dead
     * letters, signed, still are, and one whose signed headers were altered is not.
     */
    @Test
    void aPlantedOrAlteredDeadLetterIsNotBelieved() throws Exception {
        DeadLetterChannels queues = new DeadLetterChannels(() -> List.of(endpoint), Clock.systemUTC());
        String stranger = queue + ".stranger";
        Map<String, Object> planted = Map.of(RabbitHeaders.DEAD_LETTER_ID, "planted", RabbitHeaders.DEAD_LETTERED_AT, 0L,
                RabbitHeaders.OUTCOME, "FAILED", RabbitHeaders.REASON, "timeout", RabbitHeaders.CONSUMER, "inventory",
                RabbitHeaders.ORIGINAL_EXCHANGE, stranger, RabbitHeaders.ORIGINAL_ROUTING_KEY, "pay.out");
        rabbit.publish("", dlq, new AMQP.BasicProperties.Builder().headers(planted).build(), "{\"pay\":\"attacker\"}");
        await("the planted letter", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);

        assertEquals(Optional.empty(), queues.oldest(), "a planted time holds nothing back");
        List<ReplayResult> all = operations.replayAll(DeadLetterFilter.ALL, Duration.ZERO);
        assertEquals(List.of(ReplayResult.Status.NOT_REPLAYABLE), all.stream().map(ReplayResult::status).toList(), all.toString());
        assertEquals(1, TestRabbit.total(dlq), "it stays");
        DeadLetter shown = all().get(0);
        assertFalse(shown.verified() || shown.replayable(), shown.toString());

        // The connector's own letter is verified; the same with its time altered is not.
        deadLetter("mine", Outcome.FAILED, "dm");
        await("the connector's letter", LIMIT, () -> TestRabbit.total(dlq), n -> n == 2);
        DeadLetter mine = all().stream().filter(l -> !l.id().equals("planted")).findFirst().orElseThrow();
        assertTrue(mine.verified() && mine.replayable(), mine.toString());
        assertEquals(Optional.of(mine.deadLetteredAt()), queues.oldest());
        GetResponse taken = rabbit.drain(dlq).stream().filter(r -> r.getProps().getHeaders().get(RabbitHeaders.DEAD_LETTER_ID)
                .toString().equals(mine.id())).findFirst().orElseThrow();
        Map<String, Object> altered = new HashMap<>(taken.getProps().getHeaders());
        altered.put(RabbitHeaders.DEAD_LETTERED_AT, 0L);
        rabbit.publish("", dlq, taken.getProps().builder().headers(altered).build(), "mine");
        rabbit.publish("", dlq, new AMQP.BasicProperties.Builder().headers(planted).build(), "{\"pay\":\"attacker\"}");
        await("the altered and the planted letters", LIMIT, () -> TestRabbit.total(dlq), n -> n == 2);
        assertTrue(all().stream().noneMatch(DeadLetter::verified), all().toString());
        assertEquals(Optional.empty(), queues.oldest());

        // Replayed only when asked for explicitly: to the channel's own queue, as a new message.
        CompletableFuture<ReplayResult> replay = CompletableFuture.supplyAsync(() -> operations.replayUnverified("planted", LIMIT));
        Message<?> copy = probe.next();
        IncomingRabbitMetadata m = copy.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
        assertEquals(List.of("", queue, "planted"), List.of(m.exchange(), m.routingKey(), m.headers().get(RabbitHeaders.REPLAY_OF)),
                "published straight to the channel's queue, not to the stranger's exchange");
        assertFalse(m.headers().containsKey(RabbitHeaders.ORIGINAL_EXCHANGE), m.headers().toString());
        settle(copy, Outcome.PROCESSED, "");
        assertEquals(ReplayResult.Status.PROCESSED, replay.get(LIMIT.toSeconds(), TimeUnit.SECONDS).status());
        assertEquals(ReplayResult.Status.NOT_REPLAYABLE, operations.replay(mine.id(), Duration.ZERO).status(), "altered: unverified");
    }

    /** The purge's read alone keeps other reads out while it runs: one that starts meanwhile waits for it, then reads. */
    @Test
    void aReadWaitsForThePurgesReadAlone() throws Exception {
        deadLetter("alone", Outcome.FAILED, "da");
        await("the dead letter", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
        CompletableFuture<DeadLetterPage> page;
        try (DeadLetterAccess.Scan alone = endpoint.scanAlone()) {
            assertNotNull(alone.next());
            assertThrows(OnceOnlyException.class, endpoint::scanAlone, "a second read alone is refused at once");
            page = CompletableFuture.supplyAsync(() -> operations.list(DeadLetterFilter.ALL, 0, 10));
            await("the read waiting to register", LIMIT, () -> TestRabbit.total(dlq), n -> n == 1);
            assertFalse(page.isDone(), "it waits while the read alone runs");
        }
        assertEquals(1, page.get(LIMIT.toSeconds(), TimeUnit.SECONDS).letters().size(), "then reads everything");
    }

    /** Ledger rows by key digest and time, deleted as the ledger's purge deletes them. */
    static final class Rows implements Ledger {
        private final Map<String, Instant> rows = new ConcurrentHashMap<>();
        private final AtomicInteger runs = new AtomicInteger();

        Rows(Map<String, Instant> rows) {
            this.rows.putAll(rows);
        }

        boolean has(String key) {
            return rows.containsKey(key);
        }

        int runs() {
            return runs.get();
        }

        @Override
        public LedgerDecision insert(String key, String consumer, String bodyHash) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void checkReady() {
        }

        @Override
        public long purge(Instant olderThan, int batchSize) {
            int before = rows.size();
            rows.values().removeIf(t -> t.isBefore(olderThan));
            runs.incrementAndGet();
            return before - rows.size();
        }
    }
}
