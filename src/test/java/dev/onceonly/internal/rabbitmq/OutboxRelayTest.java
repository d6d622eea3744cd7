package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.GetResponse;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.outbox.OutboxRelay;
import dev.onceonly.internal.outbox.jpa.JpaOutboxStore;
import dev.onceonly.internal.outbox.jpa.JtaOutbox;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.internal.outbox.OutboxListener;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.internal.support.CurrentKey;
import dev.onceonly.testing.TcpProxy;
import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.InMemoryTelemetry;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import dev.onceonly.testing.TestRabbit;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The outbox end to end outside a server: {@link JtaOutbox} writing in transactions emulated by
 * {@link LocalJta} on this machine's PostgreSQL, {@link OutboxRelay} publishing through
 * {@link OutboxEndpoint} to this machine's RabbitMQ, a test queue counting what arrives by message id.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OutboxRelayTest {

    final String exchange = "onceonly.unit.outbox." + UUID.randomUUID();
    final String queue = exchange + ".q";
    final RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
    final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    /** Confirms of {@link OrderCheckingPublisher}: not on {@link #scheduler}, whose threads the sweeps block while they wait for them. */
    final ScheduledExecutorService confirms = Executors.newSingleThreadScheduledExecutor();
    final List<AutoCloseable> closeAfterEach = new ArrayList<>();
    ScratchDatabase db;
    LocalJta jta;
    JpaOutboxStore store;
    TestRabbit rabbit;

    @BeforeAll
    void start() throws Exception {
        db = ScratchDatabase.create(ScratchDatabase.Kind.POSTGRESQL, true);
        jta = new LocalJta(db.sessionFactory());
        store = new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "oo:");
        rabbit = new TestRabbit();
        try (var ch = rabbitChannel()) {
            ch.exchangeDeclare(exchange, "direct", false, true, null);
            ch.queueDeclare(queue, false, false, false, null);
            ch.queueBind(queue, exchange, "reserved");
        }
    }

    private com.rabbitmq.client.Channel rabbitChannel() throws Exception {
        com.rabbitmq.client.ConnectionFactory f = new com.rabbitmq.client.ConnectionFactory();
        f.setHost("127.0.0.1");
        com.rabbitmq.client.Connection c = f.newConnection("onceonly-tests-outbox");
        closeAfterAll = c;
        return c.createChannel();
    }

    private com.rabbitmq.client.Connection closeAfterAll;

    @BeforeEach
    void empty() throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.executeUpdate("delete from onceonly_outbox");
        }
        rabbit.purge(queue);
    }

    @AfterEach
    void stopRelays() throws Exception {
        for (AutoCloseable c : closeAfterEach) {
            c.close();
        }
        closeAfterEach.clear();
    }

    @AfterAll
    void stop() throws Exception {
        rabbit.deleteQueue(queue);
        rabbit.deleteExchange(exchange);
        rabbit.close();
        if (closeAfterAll != null) {
            closeAfterAll.abort();
        }
        resources.executor().shutdownNow();
        resources.scheduler().shutdownNow();
        scheduler.shutdownNow();
        confirms.shutdownNow();
        db.close();
    }

    /** A connected relay; the broker at {@code port}. */
    private OutboxRelay relay(int port, Duration sweepInterval, Duration sweepAfter, int maxAttempts) throws Exception {
        OutboxEndpoint endpoint = new OutboxEndpoint(new ConnectionSettings(List.of(new com.rabbitmq.client.Address("127.0.0.1", port)),
                "/", "guest", "guest", false, false, Duration.ofMillis(500), Duration.ofSeconds(5), "test", null),
                Duration.ofSeconds(5), resources);
        endpoint.start();
        Eventually.await("the outbox connection is open", Duration.ofSeconds(10), endpoint::connected, ok -> ok);
        OutboxRelay relay = new OutboxRelay(store, endpoint, new OutboxRelay.Settings(sweepInterval, sweepAfter, 50, maxAttempts,
                Duration.ofDays(1), Duration.ofSeconds(7), Duration.ofMillis(5)), Clock.systemUTC(), resources.executor(), scheduler, OutboxListener.NONE);
        closeAfterEach.add(endpoint::stop);
        closeAfterEach.add(relay);
        return relay;
    }

    /** A relay on {@code publisher} (no broker), {@code batchSize} rows per transaction, waiting {@code confirmWait}. */
    private OutboxRelay relay(OrderCheckingPublisher publisher, Duration sweepInterval, Duration sweepAfter, int batchSize,
                              Duration confirmWait) {
        OutboxRelay relay = new OutboxRelay(store, publisher, new OutboxRelay.Settings(sweepInterval, sweepAfter, batchSize, 5,
                Duration.ofDays(1), confirmWait, Duration.ofMillis(5)), Clock.systemUTC(), resources.executor(), scheduler, OutboxListener.NONE);
        closeAfterEach.add(relay);
        return relay;
    }

    /** Sends {@code count} messages as the guarded handler of {@code key} would, in one transaction. */
    private List<String> sendInHandler(JtaOutbox outbox, String key, int count, String routingKey) throws Exception {
        return jta.inTransaction(() -> {
            try (CurrentKey.Scope scope = CurrentKey.enter(key, 0)) {
                List<String> ids = new ArrayList<>();
                for (int n = 1; n <= count; n++) {
                    ids.add(outbox.send(OutboxMessage.text(exchange, routingKey, key + " #" + n)));
                }
                return ids;
            }
        });
    }

    /** Message id → copies that arrived, polled until {@code expected} distinct ids arrived (or 20 s). */
    private Map<String, Integer> arrived(int expected) throws Exception {
        Map<String, Integer> copies = new TreeMap<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (copies.size() < expected && System.nanoTime() < deadline) {
            for (GetResponse r : rabbit.drain(queue)) {
                copies.merge(r.getProps().getMessageId(), 1, Integer::sum);
            }
            Thread.sleep(50);
        }
        Thread.sleep(500); // a second copy would come right behind the first
        for (GetResponse r : rabbit.drain(queue)) {
            copies.merge(r.getProps().getMessageId(), 1, Integer::sum);
        }
        return copies;
    }

    private int rowsInState(int state) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select count(*) from onceonly_outbox where state = " + state)) {
            r.next();
            return r.getInt(1);
        }
    }

    @Test
    void threeMessagesOfACommittedHandlerArePublishedAtOnceInOrderWithTheirDerivedIds() throws Exception {
        // A sweep only after a minute: whatever arrives within the test came by the fast path.
        OutboxRelay relay = relay(5672, Duration.ofMinutes(1), Duration.ofMinutes(1), 5);
        JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), MessageTracing.NONE);
        Thread.sleep(200); // the relay's first sweep (at start) is done
        List<String> ids = sendInHandler(outbox, "inventory:AbC", 3, "reserved");
        assertEquals(List.of("inventory:AbC/1", "inventory:AbC/2", "inventory:AbC/3"), ids);
        List<String> inOrder = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (inOrder.size() < 3 && System.nanoTime() < deadline) {
            for (GetResponse r : rabbit.drain(queue)) {
                inOrder.add(r.getProps().getMessageId() + "=" + new String(r.getBody(), StandardCharsets.UTF_8));
            }
            Thread.sleep(20);
        }
        assertEquals(List.of("inventory:AbC/1=inventory:AbC #1", "inventory:AbC/2=inventory:AbC #2",
                "inventory:AbC/3=inventory:AbC #3"), inOrder);
        Eventually.await("all three rows marked sent", Duration.ofSeconds(5), () -> rowsInState(1) == 3, ok -> ok);
    }

    @Test
    void aHandlerThatSendsAndThenThrowsPublishesNothing() throws Exception {
        OutboxRelay relay = relay(5672, Duration.ofMillis(100), Duration.ZERO, 5);
        JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), MessageTracing.NONE);
        assertThrows(IllegalStateException.class, () -> jta.inTransaction(() -> {
            try (CurrentKey.Scope scope = CurrentKey.enter("inventory:thrown", 0)) {
                outbox.send(OutboxMessage.text(exchange, "reserved", "never"));
                throw new IllegalStateException("the handler failed after sending");
            }
        }));
        Thread.sleep(1_000); // ten sweeps
        assertEquals(0, rabbit.ready(queue));
        assertEquals(0, rowsInState(0) + rowsInState(1));
    }

    @Test
    void sendingOutsideATransactionFailsAndSaysWhy() {
        JtaOutbox outbox = new JtaOutbox(store, jta, rows -> { }, Clock.systemUTC(), MessageTracing.NONE);
        OnceOnlyException e = assertThrows(OnceOnlyException.class, () -> outbox.send(OutboxMessage.text(exchange, "reserved", "x")));
        assertTrue(e.getMessage().contains("needs an active JTA transaction"), e.getMessage());
    }

    /**
     * An instance that died after its commits and before its relay: its rows wait in the table. Two
     * relays (two instances) sweep them at once, and each message arrives once.
     */
    @Test
    void rowsLeftByAnInstanceThatDiedAreSweptOncePerIdByTwoInstancesAtOnce() throws Exception {
        Consumer<List<Long>> died = rows -> { };
        JtaOutbox deadInstance = new JtaOutbox(store, jta, died, Clock.systemUTC(), MessageTracing.NONE);
        for (int i = 0; i < 40; i++) {
            sendInHandler(deadInstance, "inventory:k" + i, 5, "reserved");
        }
        assertEquals(200, rowsInState(0));
        relay(5672, Duration.ofMillis(50), Duration.ZERO, 5);
        relay(5672, Duration.ofMillis(50), Duration.ZERO, 5);
        Map<String, Integer> copies = arrived(200);
        assertEquals(200, copies.size(), "every message arrived");
        assertEquals(List.of(), copies.entrySet().stream().filter(e -> e.getValue() != 1).toList(), "messages that arrived twice");
        Eventually.await("all rows marked sent", Duration.ofSeconds(5), () -> rowsInState(1) == 200, ok -> ok);
    }

    @Test
    void withTheBrokerUnreachableFor30SecondsRowsWaitThenAllGoOutOnce() throws Exception {
        try (TcpProxy proxy = new TcpProxy(5672)) {
            OutboxRelay relay = relay(proxy.port(), Duration.ofMillis(500), Duration.ofMillis(200), 5);
            JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), MessageTracing.NONE);
            proxy.cut();
            for (int i = 0; i < 20; i++) {
                sendInHandler(outbox, "inventory:down" + i, 1, "reserved");
            }
            Thread.sleep(30_000);
            assertEquals(0, rabbit.ready(queue), "nothing went out while the broker was unreachable");
            assertEquals(20, rowsInState(0), "the rows wait, pending");
            proxy.restore();
            Map<String, Integer> copies = arrived(20);
            assertEquals(20, copies.size(), "every message arrived after the broker came back");
            assertTrue(copies.values().stream().allMatch(n -> n == 1), "each once: " + copies);
        }
    }

    /**
     * A source's rows split over two fast-path batches (batch size 2): its first row is refused twice,
     * and the third row, alone in the second batch, waits for it instead of going out first.
     */
    @Test
    void aSourceSplitOverTwoBatchesWaitsForItsRefusedFirstRow() throws Exception {
        OrderCheckingPublisher broker = new OrderCheckingPublisher(db, confirms, 5)
                .script("inventory:split/1", new OrderCheckingPublisher.Refuse(), new OrderCheckingPublisher.Refuse());
        OutboxRelay relay = relay(broker, Duration.ofMillis(200), Duration.ZERO, 2, Duration.ofSeconds(2));
        JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), MessageTracing.NONE);
        sendInHandler(outbox, "inventory:split", 3, "reserved");
        Eventually.await("all three rows sent", Duration.ofSeconds(10), () -> rowsInState(1), n -> n == 3);
        assertEquals(List.of(), broker.violations());
        assertEquals(List.of("inventory:split/1", "inventory:split/2", "inventory:split/3"),
                broker.published().stream().distinct().toList());
    }

    /**
     * The first row's confirm comes after the relay transaction stopped waiting: the chain stops
     * there (the second row is not published after the transaction released its lock), and the
     * third row, in the next batch, waits; a sweep then publishes all three in order.
     */
    @Test
    void aConfirmTooLateStopsTheChainAndTheNextBatchWaits() throws Exception {
        OrderCheckingPublisher broker = new OrderCheckingPublisher(db, confirms, 5)
                .script("inventory:late/1", new OrderCheckingPublisher.Confirm(1_000));
        OutboxRelay relay = relay(broker, Duration.ofMillis(200), Duration.ofMillis(1_500), 2, Duration.ofMillis(300));
        JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), MessageTracing.NONE);
        sendInHandler(outbox, "inventory:late", 3, "reserved");
        Eventually.await("all three rows sent", Duration.ofSeconds(10), () -> rowsInState(1), n -> n == 3);
        Thread.sleep(1_200); // the late confirm has come
        assertEquals(List.of(), broker.violations());
        // The first publish of /1 was never confirmed in time: the sweep publishes it again (at least once).
        assertEquals(List.of("inventory:late/1", "inventory:late/1", "inventory:late/2", "inventory:late/3"), broker.published());
    }

    /**
     * Two relays sweep the same sources at once, three rows per transaction: each source's rows go
     * out in order, each once, and only by a relay holding the row.
     */
    @Test
    void twoRelaysSweepingTheSameSourcesKeepEachSourcesOrder() throws Exception {
        JtaOutbox deadInstance = new JtaOutbox(store, jta, rows -> { }, Clock.systemUTC(), MessageTracing.NONE);
        for (int i = 0; i < 4; i++) {
            sendInHandler(deadInstance, "inventory:two" + i, 6, "reserved");
        }
        OrderCheckingPublisher broker = new OrderCheckingPublisher(db, confirms, 30);
        relay(broker, Duration.ofMillis(50), Duration.ZERO, 3, Duration.ofSeconds(5));
        relay(broker, Duration.ofMillis(50), Duration.ZERO, 3, Duration.ofSeconds(5));
        Eventually.await("all rows sent", Duration.ofSeconds(20), () -> rowsInState(1), n -> n == 24);
        assertEquals(List.of(), broker.violations());
        assertEquals(24, broker.published().size(), "each row once: " + broker.published());
        for (int i = 0; i < 4; i++) {
            String source = "inventory:two" + i;
            assertEquals(java.util.stream.IntStream.rangeClosed(1, 6).mapToObj(n -> source + "/" + n).toList(),
                    broker.published().stream().filter(id -> id.startsWith(source + "/")).toList());
        }
    }

    /**
     * A message no queue takes is refused by the broker (mandatory): after max-attempts refusals it
     * is parked with its reason, and the message its handler sent after it goes out then, not before.
     */
    @Test
    void anUnroutableRowIsParkedAndTheRowsAfterItInItsSourceWaitForThat() throws Exception {
        OutboxRelay relay = relay(5672, Duration.ofMillis(100), Duration.ZERO, 3);
        JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), MessageTracing.NONE);
        jta.inTransaction(() -> {
            try (CurrentKey.Scope scope = CurrentKey.enter("inventory:parked", 0)) {
                outbox.send(OutboxMessage.text(exchange, "nobody-listens", "lost?"));
                return outbox.send(OutboxMessage.text(exchange, "reserved", "after"));
            }
        });
        Map<String, Integer> copies = arrived(1);
        assertEquals(Map.of("inventory:parked/2", 1), copies);
        assertEquals(1, rowsInState(2), "the unroutable row is parked");
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select attempts, last_error from onceonly_outbox where state = 2")) {
            r.next();
            assertEquals(3, r.getInt(1));
            assertTrue(r.getString(2).contains("unroutable"), r.getString(2));
        }
        assertEquals(new OutboxStore.Counts(0, 1), store.counts());
        Eventually.await("a sweep counted the parked row", Duration.ofSeconds(5), () -> relay.lastCounts(),
                c -> c.equals(java.util.Optional.of(new OutboxStore.Counts(0, 1))));
    }

    /**
     * A row for an exchange that does not exist is refused and parked; it does not take down the
     * relay's channel (the broker closes a channel that publishes to a missing exchange), so rows of
     * other messages, sent after it, still go out.
     */
    @Test
    void aRowForAMissingExchangeIsParkedAndTheRelayGoesOn() throws Exception {
        OutboxRelay relay = relay(5672, Duration.ofMillis(100), Duration.ZERO, 2);
        JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), MessageTracing.NONE);
        jta.inTransaction(() -> {
            try (CurrentKey.Scope scope = CurrentKey.enter("inventory:nowhere", 0)) {
                return outbox.send(OutboxMessage.text(exchange + ".missing", "reserved", "nowhere"));
            }
        });
        sendInHandler(outbox, "inventory:fine", 2, "reserved");
        Map<String, Integer> copies = arrived(2);
        assertEquals(Map.of("inventory:fine/1", 1, "inventory:fine/2", 1), copies);
        Eventually.await("the row for the missing exchange parked", Duration.ofSeconds(10), () -> rowsInState(2), n -> n == 1);
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("select last_error from onceonly_outbox where state = 2")) {
            r.next();
            assertTrue(r.getString(1).contains("does not exist"), r.getString(1));
        }
    }

    /**
     * A message carries the trace context current when the handler sent it, kept in its row's
     * headers: the relay publishes later, on a thread of its own, whose context it never uses.
     */
    @Test
    void aMessageCarriesTheTraceContextOfItsSendNotTheRelays() throws Exception {
        try (InMemoryTelemetry telemetry = new InMemoryTelemetry()) {
            OutboxRelay relay = relay(5672, Duration.ofMinutes(1), Duration.ofMinutes(1), 5);
            JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC(), telemetry.messageTracing());
            Span handler = telemetry.tracer().spanBuilder("handler").startSpan();
            try (Scope ignored = handler.makeCurrent()) {
                sendInHandler(outbox, "inventory:traced", 1, "reserved");
            } finally {
                handler.end();
            }
            GetResponse published = Eventually.await("the message published", Duration.ofSeconds(20), () -> rabbit.drain(queue),
                    got -> got.size() == 1).get(0);
            SpanData create = telemetry.span(exchange + " create");
            String trace = handler.getSpanContext().getTraceId();
            assertEquals(trace, create.getTraceId());
            assertEquals(handler.getSpanContext().getSpanId(), create.getParentSpanId());
            String traceparent = "00-" + trace + "-" + create.getSpanId() + "-01";
            assertEquals(traceparent, published.getProps().getHeaders().get("traceparent").toString());
            try (Connection c = db.connect(); Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("select headers from onceonly_outbox where message_id = 'inventory:traced/1'")) {
                assertTrue(r.next());
                assertTrue(r.getString(1).contains(traceparent), "kept with the row: " + r.getString(1));
            }
        }
    }
}
