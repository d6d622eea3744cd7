package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Connection;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.TestRabbit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When {@link DelayQueues} declares a delay queue, against the machine's RabbitMQ and a clock the
 * test moves: once per {@link DelayQueues#RENEW} (which renews the queue's x-expires lease), again
 * at once after a failed publish, and a failure is not retried for every copy.
 */
class DelayQueuesTest {

    static final Duration DELAY = Duration.ofSeconds(8);

    final String queue = "onceonly.unit.delayq." + UUID.randomUUID();
    final String delayQueue = DelayQueueNames.name(queue, DELAY);
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final AtomicLong clock = new AtomicLong();
    TestRabbit rabbit;
    Connection connection;

    @BeforeEach
    void connect() throws Exception {
        rabbit = new TestRabbit();
        connection = resources.open(settings(true).connection(), "delayq-unit", "publish");
    }

    @AfterEach
    void close() throws Exception {
        Connections.closeQuietly(connection);
        rabbit.deleteQueue(delayQueue);
        rabbit.close();
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
    }

    private IncomingSettings settings(boolean declare) {
        return TestChannelConfig.of(Map.of("channel-name", "delayq-unit", "queue.name", queue, "host", "127.0.0.1",
                "declare", Boolean.toString(declare)), ChannelConfig.Direction.INCOMING).incoming();
    }

    private boolean exists() {
        try {
            rabbit.ready(delayQueue);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void declaredOncePerRenewalThenAgain() throws Exception {
        DelayQueues queues = new DelayQueues(settings(true), () -> connection, clock::get);
        assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));
        assertTrue(exists());

        rabbit.deleteQueue(delayQueue);
        clock.addAndGet(DelayQueues.RENEW.minusSeconds(1).toNanos());
        assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));
        assertFalse(exists(), "declared again before the renewal was due");

        clock.addAndGet(Duration.ofSeconds(2).toNanos());
        assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));
        assertTrue(exists(), "the renewal declares it again, which renews its x-expires lease");
    }

    /** A copy that could not be published to the queue (deleted under the connector) makes the next one declare it. */
    @Test
    void aForgottenQueueIsDeclaredForTheNextCopy() throws Exception {
        DelayQueues queues = new DelayQueues(settings(true), () -> connection, clock::get);
        queues.queueFor(DELAY);
        rabbit.deleteQueue(delayQueue);
        queues.forget(delayQueue);
        assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));
        assertTrue(exists());
    }

    /** declare=false and no such queue: not created, said once, looked up again after the renewal interval. */
    @Test
    void aMissingUndeclaredQueueIsReportedOncePerRenewal() throws Exception {
        DelayQueues queues = new DelayQueues(settings(false), () -> connection, clock::get);
        try (LogCapture log = new LogCapture()) {
            assertEquals(Optional.empty(), queues.queueFor(DELAY));
            assertEquals(Optional.empty(), queues.queueFor(DELAY));
            assertEquals(1, log.lines().stream().filter(l -> l.contains("ONCE0520W")).count(), log.lines().toString());
            assertFalse(exists());

            rabbit.declareQuorumQueue(delayQueue); // as an operator would (any type will do)
            assertEquals(Optional.empty(), queues.queueFor(DELAY), "not looked up again before the interval");
            clock.addAndGet(DelayQueues.RENEW.toNanos());
            assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));
        }
    }

    /** Left out of amqp-client's topology recovery by name: only names the connector gives its delay queues. */
    @Test
    void delayQueuesAreToldByTheirName() {
        assertTrue(DelayQueueNames.isDelayQueue(delayQueue));
        assertFalse(DelayQueueNames.isDelayQueue(queue));
        assertFalse(DelayQueueNames.isDelayQueue("orders.onceonly.delay.audit"));
        assertFalse(DelayQueueNames.isDelayQueue("orders.onceonly.delay."));
    }

    /**
     * A classic work queue that refuses messages when full ({@code reject-publish}) would drop a
     * copy whose delay ends while it is full: a classic delay queue dead-letters at most once. Its
     * delay queue dead-letters at least once instead (a quorum queue: the broker keeps the copy and
     * tries again, RELIABILITY.md), and the broker accepts that declaration; one that drops its head
     * when full takes every copy, and keeps a classic delay queue.
     */
    @Test
    void aWorkQueueThatRefusesWhenFullGetsADelayQueueThatDeadLettersAtLeastOnce() throws Exception {
        Map<String, Object> args = DelayQueues.arguments(limited("reject-publish"), DELAY);

        assertEquals("quorum", args.get("x-queue-type"));
        assertEquals("at-least-once", args.get("x-dead-letter-strategy"));
        assertEquals("reject-publish", args.get("x-overflow"));
        try (com.rabbitmq.client.Channel ch = connection.createChannel()) {
            ch.queueDeclare(delayQueue, true, false, false, args);
        }
        assertEquals("at-least-once", DelayQueues.arguments(limited("reject-publish-dlx"), DELAY).get("x-dead-letter-strategy"));
        assertFalse(DelayQueues.arguments(limited("drop-head"), DELAY).containsKey("x-queue-type"));
    }

    private IncomingSettings limited(String overflow) {
        return TestChannelConfig.of(Map.of("channel-name", "delayq-unit", "queue.name", queue, "host", "127.0.0.1",
                "queue.max-length", "10", "queue.overflow", overflow), ChannelConfig.Direction.INCOMING).incoming();
    }

    /**
     * A delay queue whose copies cannot be dead-lettered yet (at-least-once into a work queue that is
     * full or away) keeps them: it has no {@code x-expires}, which would delete it with them, its
     * originals acked long ago. bin/onceonly-topology lists and deletes delay queues instead.
     */
    @Test
    void aDelayQueueNeverExpires() throws Exception {
        DelayQueues queues = new DelayQueues(settings(true), () -> connection, clock::get);
        assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));

        String declared = TestRabbit.queueArguments(delayQueue);
        assertFalse(declared.contains("x-expires"), declared);
        assertFalse(DelayQueues.arguments(limited("reject-publish"), DELAY).containsKey("x-expires"));
    }

    /**
     * A rolling upgrade: the delay queue exists, empty, as an earlier version declared it (with
     * {@code x-expires}, which a declaration cannot change). It is replaced by one that never
     * expires, not refused (PRECONDITION_FAILED would hold every retry of that delay in the consumer).
     */
    @Test
    void anEmptyDelayQueueOfAnEarlierVersionIsReplaced() throws Exception {
        try (com.rabbitmq.client.Channel ch = connection.createChannel()) {
            ch.queueDeclare(delayQueue, true, false, false, DelayQueues.earlierArguments(settings(true), DELAY));
        }
        DelayQueues queues = new DelayQueues(settings(true), () -> connection, clock::get);
        try (LogCapture log = new LogCapture()) {
            assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));
            assertTrue(log.lines().stream().anyMatch(l -> l.contains("ONCE0535I")), log.lines().toString());
        }
        String declared = TestRabbit.queueArguments(delayQueue);
        assertFalse(declared.contains("x-expires"), declared);
    }

    /**
     * A quorum one (at-least-once, for a quorum work queue or one that refuses when full) is used as
     * it is and said: RabbitMQ refuses to delete a quorum queue only if empty with a connection
     * error, which would close the publishing connection.
     */
    @Test
    void aQuorumDelayQueueOfAnEarlierVersionIsUsedAsItIs() throws Exception {
        IncomingSettings settings = limited("reject-publish");
        try (com.rabbitmq.client.Channel ch = connection.createChannel()) {
            ch.queueDeclare(delayQueue, true, false, false, DelayQueues.earlierArguments(settings, DELAY));
        }
        DelayQueues queues = new DelayQueues(settings, () -> connection, clock::get);
        try (LogCapture log = new LogCapture()) {
            assertEquals(Optional.of(delayQueue), queues.queueFor(DELAY));
            assertTrue(log.lines().stream().anyMatch(l -> l.contains("ONCE0537W")), log.lines().toString());
        }
        assertTrue(connection.isOpen(), "the publishing connection is still open");
        assertTrue(TestRabbit.queueArguments(delayQueue).contains("x-expires"), "not deleted");
    }

    /**
     * The same with copies still in it: never deleted under them. It is used as it is (declared again
     * as it was, which renews its lease as the earlier version did), said, and replaced once empty.
     */
    @Test
    void aDelayQueueOfAnEarlierVersionHoldingCopiesIsKeptUntilEmpty() throws Exception {
        Duration delay = Duration.ofMinutes(2); // the copy stays while the test runs
        String name = DelayQueueNames.name(queue, delay);
        try {
            try (com.rabbitmq.client.Channel ch = connection.createChannel()) {
                ch.queueDeclare(name, true, false, false, DelayQueues.earlierArguments(settings(true), delay));
            }
            rabbit.publish("", name, "copy");
            DelayQueues queues = new DelayQueues(settings(true), () -> connection, clock::get);
            try (LogCapture log = new LogCapture()) {
                assertEquals(Optional.of(name), queues.queueFor(delay));
                assertTrue(log.lines().stream().anyMatch(l -> l.contains("ONCE0536W")), log.lines().toString());
            }
            assertEquals(1, TestRabbit.total(name), "the copy is still there");

            rabbit.purge(name);
            clock.addAndGet(DelayQueues.RENEW.toNanos());
            assertEquals(Optional.of(name), queues.queueFor(delay));
            String declared = TestRabbit.queueArguments(name);
            assertFalse(declared.contains("x-expires"), "replaced once empty: " + declared);
        } finally {
            rabbit.deleteQueue(name);
        }
    }

    /** A queue of that name with arguments neither version gives it (an operator's) is neither deleted nor used. */
    @Test
    void aDelayQueueWithOtherArgumentsIsLeftAlone() throws Exception {
        try (com.rabbitmq.client.Channel ch = connection.createChannel()) {
            ch.queueDeclare(delayQueue, true, false, false, Map.of("x-message-ttl", 1234));
        }
        DelayQueues queues = new DelayQueues(settings(true), () -> connection, clock::get);
        try (LogCapture log = new LogCapture()) {
            assertEquals(Optional.empty(), queues.queueFor(DELAY));
            assertTrue(log.lines().stream().anyMatch(l -> l.contains("ONCE0520W")), log.lines().toString());
        }
        assertTrue(TestRabbit.queueArguments(delayQueue).contains("1234"), "still the operator's");
    }
}
