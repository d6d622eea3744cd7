package dev.onceonly.internal.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.outbox.jpa.JpaOutboxStore;
import dev.onceonly.internal.outbox.jpa.JtaOutbox;
import dev.onceonly.spi.MessageTracing;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A batch handler's outbox sends while the batch is split and run again after a failure: the real
 * {@link JtaOutbox} and {@link JpaOutboxStore} on the scratch database, transactions through the
 * production runner. A send in the batch's own transaction commits with it, once; a send in a
 * {@code REQUIRES_NEW} transaction the handler starts commits apart from the batch, so each run of
 * the batch sends it again, and it must be the same message (the same id) every time.
 */
class BatchOutboxTest extends LedgerOnEngineTest {

    private final String consumer = "batch-outbox-" + UUID.randomUUID().toString().substring(0, 8);
    private final ConsumerSettings settings = Settings.withLedger(Settings.defaults(consumer, KeyStrategy.CONTENT), true);
    private final JtaOutbox outbox = new JtaOutbox(new JpaOutboxStore(db.tables().outbox(), jta::entityManager, jta, "oo:"),
            jta, rows -> { }, Clock.systemUTC(), MessageTracing.NONE);
    /** The positions each handler call was given, in call order. */
    private final List<List<Integer>> calls = new CopyOnWriteArrayList<>();

    /**
     * Message 3 is poison: the batch runs whole, then in halves, down to it alone. Each run sends one
     * message per position from a {@code REQUIRES_NEW} transaction; each must be in the outbox once.
     */
    @Test
    void aRequiresNewSendWithoutItsOwnIdIsInTheOutboxOnceThoughTheBatchRunsAgain() throws Exception {
        List<Decision<Object>> decisions = runWithPoison(p -> OutboxMessage.text("orders", "order.reserved", body(p)));

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED, Outcome.FAILED),
                decisions.stream().map(Decision::outcome).toList());
        assertEquals(Map.of(body(0), 1, body(1), 1, body(2), 1, body(3), 1), outboxRows(), "each message sent once");
    }

    /** With its own id, a batch's {@code REQUIRES_NEW} send runs in the batch and is found again by each re-run. */
    @Test
    void aRequiresNewSendWithItsOwnIdRunsInTheBatchAndIsInTheOutboxOnce() throws Exception {
        List<Decision<Object>> decisions = runWithPoison(
                p -> OutboxMessage.text("orders", "order.reserved", body(p)).withMessageId(consumer + "-" + p));

        assertEquals(List.of(Outcome.PROCESSED, Outcome.PROCESSED, Outcome.PROCESSED, Outcome.FAILED),
                decisions.stream().map(Decision::outcome).toList());
        assertEquals(List.of(0, 1, 2, 3), calls.get(0), "the batch ran whole first");
        assertEquals(Map.of(body(0), 1, body(1), 1, body(2), 1, body(3), 1), outboxRows(), "each message sent once");
    }

    /** Runs a batch of four whose handler sends {@code message(p)} from a {@code REQUIRES_NEW} transaction for each position. */
    private List<Decision<Object>> runWithPoison(IntFunction<OutboxMessage> message) throws Exception {
        GuardEngine engine = new GuardEngine(new InMemoryClaimStore(10_000, clock), transactions, null, scheduler,
                e -> { }, new KeyDeriver("oo:"));
        List<RecordingDispatch> batch = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            batch.add(new RecordingDispatch(MessageView.of("orders", "order.placed", null, Map.of(),
                    body(i).getBytes(StandardCharsets.UTF_8)), true));
        }
        List<Decision<Object>> decisions = engine.guardAll(Settings.withLedger(settings, false), batch, positions -> {
            calls.add(List.copyOf(positions));
            for (int p : positions) {
                jta.call(() -> outbox.send(message.apply(p)));
            }
            if (positions.contains(3)) {
                throw new IllegalStateException("poison message");
            }
            return null;
        });
        assertEquals(0, engine.close(Duration.ofSeconds(5)), "every call finished");
        return decisions;
    }

    private String body(int position) {
        return consumer + ":" + position;
    }

    /** This test's committed outbox rows: body → how many. */
    private Map<String, Integer> outboxRows() throws Exception {
        Map<String, Integer> rows = new TreeMap<>();
        try (Connection c = db.connect();
             PreparedStatement s = c.prepareStatement("select body from " + db.tables().outbox())) {
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    String body = new String(r.getBytes(1), StandardCharsets.UTF_8);
                    if (body.startsWith(consumer + ":")) {
                        rows.merge(body, 1, Integer::sum);
                    }
                }
            }
        }
        return rows;
    }
}
