package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.RabbitHeaders;

import dev.onceonly.rabbitmq.IncomingRabbitMetadata;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Address;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.onceonly.spi.Handover;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.RabbitCluster;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import static dev.onceonly.testing.Eventually.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An incoming channel on a quorum queue replicated over a three-node cluster of its own
 * ({@link RabbitCluster}), configured with every node in {@code addresses}, while nodes are killed
 * with SIGKILL under load: nothing is lost, duplicates (redeliveries of what was processed but not
 * yet acked when the node died) are counted, and attempts and dead-lettering hold.
 *
 * <p>The load is {@code -Donceonly.failover.messages} messages per test (default 1500);
 * {@code bench/run-rabbit-failover.sh} runs it longer. Each test prints its figures on a line
 * starting with {@code FAILOVER}.
 */
class RabbitClusterFailoverTest {

    static final int MESSAGES = Integer.getInteger("onceonly.failover.messages", 1500);
    static final Duration LIMIT = Duration.ofSeconds(Math.max(90, MESSAGES / 50));

    static RabbitCluster cluster;

    final String queue = "onceonly.test.failover." + UUID.randomUUID();
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final List<InboundChannel> channels = new ArrayList<>();
    final List<Connection> connections = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = RabbitCluster.start(3);
        System.out.printf("FAILOVER cluster of 3 nodes started in %d ms (%s)%n", cluster.startup().toMillis(), cluster.addresses());
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void clusterIsWhole() throws Exception {
        // A test that killed a node leaves it dead; the next one needs all three again.
        for (RabbitCluster.Node n : cluster.nodes()) {
            cluster.restart(n);
        }
        await("every node back in the cluster", LIMIT, () -> cluster.runningNodes(cluster.anyRunning()).size(), n -> n == 3);
        assertEquals(3, cluster.runningNodes(cluster.anyRunning()).size(), "every node runs");
    }

    @AfterEach
    void close() throws Exception {
        for (InboundChannel c : channels) {
            c.stopConsuming();
            c.drainAndClose();
        }
        for (Connection c : connections) {
            c.abort(5_000);
        }
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
        for (RabbitCluster.Node n : cluster.nodes()) {
            cluster.restart(n); // a classic queue on a killed node can only be deleted once it runs
        }
        try (Connection c = connect(cluster.nodes()); Channel ch = c.createChannel()) {
            ch.queueDelete(queue);
            ch.queueDelete(queue + ".dlq");
            ch.exchangeDelete(queue + ".dlx");
        }
    }

    /**
     * (a) The node the consumer is connected to dies, a follower of the queue: the channel reconnects
     * to the other follower and nothing is lost.
     */
    @Test
    void theConsumersNodeDies() throws Exception {
        RabbitCluster.Node leader = cluster.node(0);
        declareQueueOn(leader);
        Recorder recorder = new Recorder(id -> false);
        InboundChannel channel = start(recorder, cluster.node(1).address() + "," + cluster.node(2).address());
        RabbitCluster.Node victim = consumerNode();
        Result r = loadAndKill(recorder, channel, victim, "consumer's node (a follower)");
        assertNotEquals(victim, consumerNode(), "consuming from a live node");
        assertEquals(leader, cluster.leaderOf(queue).orElseThrow(), "the leader did not change");
        r.assertNothingLost();
    }

    /**
     * (a+b) The channel declared the queue, so the queue's leader is the node the consumer is on
     * (client-local placement); that node dies: a new leader and a new connection at once.
     */
    @Test
    void theConsumersNodeDiesAndItLedTheQueue() throws Exception {
        Recorder recorder = new Recorder(id -> false);
        InboundChannel channel = start(recorder, cluster.addresses());
        RabbitCluster.Node victim = consumerNode();
        assertEquals(victim, cluster.leaderOf(queue).orElseThrow(), "the queue declared through the consumer's node is led by it");
        Result r = loadAndKill(recorder, channel, victim, "consumer's node, also the queue's leader");
        assertNotEquals(victim, consumerNode(), "consuming from a live node");
        r.assertNothingLost();
    }

    /** (b) The quorum queue's leader dies while the consumer is on a follower: a new leader is elected, nothing is lost. */
    @Test
    void theQueueLeaderDies() throws Exception {
        // Declared through the first node, which then leads the queue (client-local leader placement);
        // the channel connects to the two others only.
        RabbitCluster.Node leader = cluster.node(0);
        declareQueueOn(leader);
        Recorder recorder = new Recorder(id -> false);
        InboundChannel channel = start(recorder, cluster.node(1).address() + "," + cluster.node(2).address());
        assertEquals(leader, cluster.leaderOf(queue).orElseThrow(), "the first node leads the queue");
        Result r = loadAndKill(recorder, channel, leader, "queue leader (consumer on a follower)");
        await("a new leader", LIMIT, () -> cluster.leaderOf(queue).map(n -> !n.equals(leader)).orElse(false), ok -> ok);
        r.assertNothingLost();
    }

    /**
     * (c) A message whose handler always fails ends in the dead-letter queue with its reason after
     * max-attempts, though the node the consumer was on died while it was being retried.
     */
    @Test
    void attemptsAndDeadLetteringHoldAcrossAFailover() throws Exception {
        Recorder recorder = new Recorder(id -> id.startsWith("poison"));
        InboundChannel channel = start(recorder, cluster.addresses());
        RabbitCluster.Node victim = consumerNode();
        try (Connection publisher = publisherAvoiding(victim)) {
            Channel ch = publisher.createChannel();
            ch.confirmSelect();
            publish(ch, "poison-1");
            await("the first failed attempt", LIMIT, () -> recorder.failures.get(), n -> n >= 1);
            long killedAt = System.nanoTime();
            cluster.kill(victim);
            await("the channel consuming again", LIMIT, channel::connected, up -> up);
            long reconnected = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                publish(ch, "after-" + i);
            }
            await("the dead letter", LIMIT, () -> depth(queue + ".dlq"), n -> n == 1);
            await("the other messages", LIMIT, () -> recorder.unique(), n -> n == 21);
            GetResponse dead = ch.basicGet(queue + ".dlq", true);
            Map<String, Object> h = dead.getProps().getHeaders();
            System.out.printf("FAILOVER dead-letter: killed %s (consumer's node) after attempt 1; reconnected in %d ms; "
                            + "handler saw the poison message %d time(s) (attempts %s); dead-lettered with %s after %s attempt(s): %s%n",
                    victim.name(), (reconnected - killedAt) / 1_000_000, recorder.count("poison-1"), recorder.poisonAttempts,
                    h.get(RabbitHeaders.OUTCOME), h.get(RabbitHeaders.ATTEMPTS), h.get(RabbitHeaders.REASON));
            assertEquals("poison-1", new String(dead.getBody(), StandardCharsets.UTF_8));
            assertEquals("FAILED", String.valueOf(h.get(RabbitHeaders.OUTCOME)));
            assertEquals(3, ((Number) h.get(RabbitHeaders.ATTEMPTS)).intValue(), "dead-lettered at max-attempts");
            assertTrue(String.valueOf(h.get(RabbitHeaders.REASON)).contains("always fails"), String.valueOf(h.get(RabbitHeaders.REASON)));
            assertTrue(recorder.count("poison-1") <= 3, "at most max-attempts handler calls: " + recorder.poisonAttempts);
            await("the queue empty", LIMIT, () -> depth(queue), n -> n == 0);
        }
    }

    /**
     * A classic queue lives on the node that declared it, the consumer's. That node dies: amqp-client
     * recovers the connection on another node, but its topology recovery cannot redeclare the queue
     * (404: its node is down), the broker closes the recovering channel and the consumer is not
     * recovered. Before, the channel never consumed again, even after the node came back; now it
     * keeps trying and consumes once the queue is there again.
     */
    @Test
    void aClassicQueuesNodeDiesAndComesBack() throws Exception {
        Recorder recorder = new Recorder(id -> false);
        InboundChannel channel = start(recorder, cluster.addresses(), "classic");
        RabbitCluster.Node home = consumerNode();
        try (Connection publisher = publisherAvoiding(home)) {
            Channel ch = publisher.createChannel();
            ch.confirmSelect();
            publish(ch, "before");
            await("the message before", LIMIT, () -> recorder.count("before"), n -> n == 1);
            cluster.kill(home);
            Thread.sleep(3_000); // reconnections and failing redeclarations while the queue's node is down
            cluster.restart(home);
            long restarted = System.nanoTime();
            await("the channel consuming again", LIMIT, channel::connected, up -> up);
            long consuming = System.nanoTime();
            publish(ch, "after");
            await("the message after", LIMIT, () -> recorder.count("after"), n -> n == 1);
            System.out.printf("FAILOVER classic queue: its node %s killed and restarted; consuming again %d ms after the restart%n",
                    home.name(), (consuming - restarted) / 1_000_000);
        }
    }

    // ------------------------------------------------------------------ load, kill, count

    /** What one failover run counted. */
    record Result(int sent, int processed, int duplicates, int lost) {
        void assertNothingLost() {
            assertEquals(0, lost, "lost messages");
            assertEquals(sent, processed);
        }
    }

    /**
     * Publishes {@link #MESSAGES} with confirms from a node that stays up, kills {@code victim} once
     * a third were processed, and waits until every message was processed and the queue is empty.
     */
    private Result loadAndKill(Recorder recorder, InboundChannel channel, RabbitCluster.Node victim, String what) throws Exception {
        try (Connection publisher = publisherAvoiding(victim)) {
            Channel ch = publisher.createChannel();
            ch.confirmSelect();
            Thread load = new Thread(() -> {
                try {
                    for (int i = 0; i < MESSAGES; i++) {
                        ch.basicPublish("", queue, true, props("m-" + i), ("m-" + i).getBytes(StandardCharsets.UTF_8));
                        if (i % 50 == 49) {
                            ch.waitForConfirmsOrDie(30_000);
                        }
                    }
                    ch.waitForConfirmsOrDie(30_000);
                } catch (Exception e) {
                    recorder.publishFailure = e;
                }
            }, "failover-load");
            load.start();
            await("a third processed", LIMIT, recorder::unique, n -> n >= MESSAGES / 3);
            int before = recorder.unique();
            long killedAt = System.nanoTime();
            recorder.markKill(killedAt);
            cluster.kill(victim);
            // Ready again: consuming, and on a connection to a node that runs (just after the kill the
            // channel may not have noticed yet that its connection is gone).
            await("the channel consuming on a live node", LIMIT, () -> channel.connected() && consumingPort(channel) != victim.amqpPort(),
                    up -> up);
            long connected = System.nanoTime();
            load.join(LIMIT.toMillis());
            assertEquals(null, recorder.publishFailure, "every publish confirmed");
            await("every message processed", LIMIT, recorder::unique, n -> n >= MESSAGES);
            await("the queue empty (everything acked)", LIMIT, () -> depth(queue), n -> n == 0);
            Result r = new Result(MESSAGES, recorder.unique(), recorder.deliveries.get() - recorder.unique(),
                    MESSAGES - recorder.unique());
            System.out.printf("FAILOVER %s: killed %s after %d processed; longest pause in processing after the kill %d ms, "
                            + "processing resumed %d ms after the kill; first delivery from a live node %s; channel ready on a live node "
                            + "%d ms after the kill; sent %d, processed %d, duplicates %d, lost %d, dead-lettered %d%n",
                    what, victim.name(), before, recorder.longestPauseMillis(), recorder.resumedAfterMillis(),
                    recorder.firstFromOtherThan(victim.amqpPort()).map(t -> (t - killedAt) / 1_000_000 + " ms after the kill")
                            .orElse("none (the consumer stayed on its node)"),
                    (connected - killedAt) / 1_000_000, r.sent(), r.processed(), r.duplicates(), r.lost(), depth(queue + ".dlq"));
            assertEquals(0, depth(queue + ".dlq"), "nothing dead-lettered");
            return r;
        }
    }

    private InboundChannel start(Recorder recorder, String addresses) throws Exception {
        return start(recorder, addresses, "quorum");
    }

    private InboundChannel start(Recorder recorder, String addresses, String queueType) throws Exception {
        Map<String, String> props = new HashMap<>(Map.of("channel-name", "failover", "queue.name", queue, "addresses", addresses,
                "queue.type", queueType, "prefetch", "16", "retry-delay", "1s", "max-attempts", "3",
                "network-recovery-interval", "500ms", "connection-timeout", "2s", "confirm-timeout", "5s"));
        props.put("drain-timeout", "2s");
        InboundChannel channel = new InboundChannel(TestChannelConfig.of(props, ChannelConfig.Direction.INCOMING).incoming(),
                resources, new Handover(), () -> MessageTracing.NONE, () -> DeadLetterListener.NONE);
        channels.add(channel);
        channel.subscribe(recorder);
        channel.start();
        await("the channel consuming", LIMIT, channel::connected, up -> up);
        return channel;
    }

    /** The AMQP port of the channel's consuming connection (the node it is on now), or -1 while it is not open. */
    private static int consumingPort(InboundChannel channel) throws Exception {
        java.lang.reflect.Field consuming = InboundChannel.class.getDeclaredField("consuming");
        consuming.setAccessible(true);
        java.lang.reflect.Field f = ConsumingConnection.class.getDeclaredField("connection");
        f.setAccessible(true);
        Connection c = (Connection) f.get(consuming.get(channel));
        return c == null || !c.isOpen() ? -1 : c.getPort();
    }

    /** The node of the channel's consuming connection. */
    private RabbitCluster.Node consumerNode() throws Exception {
        return await("the consuming connection listed", LIMIT, () -> cluster.nodeOfConnection("onceonly:failover:consume"),
                n -> n.isPresent()).orElseThrow();
    }

    private void declareQueueOn(RabbitCluster.Node node) throws Exception {
        try (Connection c = connect(List.of(node)); Channel ch = c.createChannel()) {
            ch.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum", "x-delivery-limit", 20,
                    "x-dead-letter-exchange", queue + ".dlx", "x-dead-letter-routing-key", queue));
        }
    }

    /** A publishing connection to the nodes other than {@code victim}, so no publish is in doubt when it dies. */
    private Connection publisherAvoiding(RabbitCluster.Node victim) throws Exception {
        return connect(cluster.nodes().stream().filter(n -> !n.equals(victim)).toList());
    }

    private Connection connect(List<RabbitCluster.Node> nodes) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setConnectionTimeout(5_000);
        Connection c = f.newConnection(nodes.stream().map(n -> new Address("127.0.0.1", n.amqpPort())).toList(), "failover-publisher");
        connections.add(c);
        return c;
    }

    private void publish(Channel ch, String id) throws Exception {
        ch.basicPublish("", queue, true, props(id), id.getBytes(StandardCharsets.UTF_8));
        ch.waitForConfirmsOrDie(30_000);
    }

    private static AMQP.BasicProperties props(String id) {
        return new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build();
    }

    /** Messages in {@code q}, ready or unacked, as a running node reports them. */
    private int depth(String q) throws Exception {
        for (String line : cluster.ctl(cluster.anyRunning(), "-q", "list_queues", "name", "messages").split("\n")) {
            String[] cols = line.trim().split("\t");
            if (cols.length == 2 && cols[0].equals(q)) {
                return Integer.parseInt(cols[1].trim());
            }
        }
        return -1; // not listed (its node is down)
    }

    /** The application: records each delivery by message id, fails the ones {@code failing} names, acks the rest. */
    static final class Recorder implements Subscriber<Message<?>> {
        final Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        final AtomicInteger deliveries = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        /** After the kill: when each delivery was processed and from which node (its AMQP port). */
        final Queue<long[]> afterKill = new ConcurrentLinkedQueue<>();
        volatile long killedAt;
        final List<Integer> poisonAttempts = new CopyOnWriteArrayList<>();
        final Predicate<String> failing;
        volatile Exception publishFailure;

        Recorder(Predicate<String> failing) {
            this.failing = failing;
        }

        void markKill(long nanos) {
            killedAt = nanos;
        }

        /** The longest time without a delivery processed, from the kill on. */
        long longestPauseMillis() {
            return pause()[0] / 1_000_000;
        }

        /** When processing resumed after that pause, from the kill. */
        long resumedAfterMillis() {
            return (pause()[1] - killedAt) / 1_000_000;
        }

        private long[] pause() {
            long last = killedAt;
            long longest = 0;
            long resumed = killedAt;
            for (long[] d : afterKill) {
                if (d[0] - last > longest) {
                    longest = d[0] - last;
                    resumed = d[0];
                }
                last = d[0];
            }
            return new long[] {longest, resumed};
        }

        Optional<Long> firstFromOtherThan(int port) {
            return afterKill.stream().filter(d -> d[1] != port).map(d -> d[0]).findFirst();
        }

        int unique() {
            return seen.size();
        }

        int count(String id) {
            AtomicInteger n = seen.get(id);
            return n == null ? 0 : n.get();
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Message<?> m) {
            IncomingRabbitMetadata meta = m.getMetadata(IncomingRabbitMetadata.class).orElseThrow();
            String id = meta.properties().getMessageId();
            seen.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
            deliveries.incrementAndGet();
            if (killedAt != 0) {
                afterKill.add(new long[] {System.nanoTime(), ((IncomingRabbitMessage<?>) m).delivery().channel.getConnection().getPort()});
            }
            if (failing.test(id)) {
                poisonAttempts.add(meta.attempt());
                failures.incrementAndGet();
                m.nack(new IllegalStateException("always fails: " + id));
            } else {
                m.ack();
            }
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
    }
}
