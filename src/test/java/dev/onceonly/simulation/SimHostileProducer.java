package dev.onceonly.simulation;

import com.rabbitmq.client.AMQP;
import dev.onceonly.rabbitmq.RabbitHeaders;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A producer that forges the connector's headers, in the runs that draw one (RabbitMQ modes): some
 * copies of valid messages carry forged {@code x-onceonly-*} retry-copy headers (an attempt count
 * near the last, another exchange and routing key, a signature that is not the connector's) and a
 * forged {@code x-delivery-count}; besides, it publishes messages of its own straight to the
 * channel's queue as forged retry copies ({@link #FORGED}), and plants dead letters in the
 * dead-letter queue with forged dead-letter headers ({@link #PLANTED}: a dead-letter time at the
 * epoch, which would stop the ledger purge for good if believed, an outcome, reason, exchange and
 * routing key, no valid signature). What must hold is checked by {@link Invariants} (a valid
 * message keeps its attempts, is applied once, is dead-lettered only after its attempts) and here:
 * a forged or planted message is applied only if an operator replayed it, and an unverified
 * dead-letter time never holds the purge back.
 */
final class SimHostileProducer {

    static final String FORGED = "forged";
    static final String PLANTED = "planted";
    /** Chance that a run of a RabbitMQ mode has a hostile producer. */
    private static final double CHANCE = 0.3;
    /** Chance that a copy of a valid message carries forged headers, in such a run. */
    private static final double FORGED_HEADERS = 0.25;
    /** The run's wall clock starts here; the instances' may be up to {@link StopsAndClocks#MAX_SKEW_MS} behind it. */
    private static final long RUN_STARTS_MS = 1_700_000_000_000L;
    /** A day before the run: every planted dead-letter time is older, no time a connector of the run stamps is. */
    private static final long PLANTED_BEFORE_MS = RUN_STARTS_MS - 86_400_000L;

    private final World w;
    final boolean on;

    SimHostileProducer(World w) {
        this.w = w;
        this.on = w.mode.jmsDeliveries() == 0 && w.loop.chance(CHANCE);
    }

    /** The headers copy {@code copy} of the valid message {@code id} is published with: now and then forged ones. */
    Map<String, Object> headers(String id, String copy) {
        Map<String, Object> h = new HashMap<>();
        h.put(World.COPY_HEADER, copy);
        if (on && id.startsWith("m")
                && w.loop.trace.fault(w.loop.chance(FORGED_HEADERS), "hostile producer forges the headers of " + id)) {
            forgeCopyHeaders(h);
            h.put(RabbitHeaders.DELIVERY_COUNT, (long) Mode.MAX_ATTEMPTS + w.loop.random.nextInt(5));
            SimOperators.count("hostile: copy of a valid message with forged headers");
        }
        return h;
    }

    /** A retry copy's headers, claiming a late attempt and another exchange and routing key, signed by nobody. */
    private void forgeCopyHeaders(Map<String, Object> h) {
        h.put(RabbitHeaders.RETRY_ATTEMPTS, Mode.MAX_ATTEMPTS - 1 - w.loop.random.nextInt(2));
        h.put(RabbitHeaders.ORIGINAL_EXCHANGE, "elsewhere");
        h.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, "order.placed");
        if (w.loop.chance(0.5)) {
            h.put(RabbitHeaders.SIGNATURE, "v1.forged-signature");
        }
    }

    /** Draws the producer's own messages: forged copies and planted dead letters, while faults are on. */
    void schedule() {
        if (!on) {
            return;
        }
        int n = 1 + w.loop.random.nextInt(3);
        for (int i = 0; i < n; i++) {
            boolean planted = w.loop.chance(0.5);
            String id = (planted ? PLANTED : FORGED) + i;
            w.published.put(id, planted ? PLANTED : FORGED);
            long at = TimeUnit.MILLISECONDS.toNanos(w.loop.random.nextLong(1_500));
            w.loop.schedule(w.broker.self, at, 0, () -> publish(id, planted));
        }
    }

    private void publish(String id, boolean planted) {
        String queue = planted ? World.QUEUE + ".dlq" : World.QUEUE;
        SimBroker.Queue q = w.broker.queues.get(queue);
        if (q == null) {
            w.loop.schedule(w.broker.self, TimeUnit.MILLISECONDS.toNanos(20), 0, () -> publish(id, planted));
            return;
        }
        Map<String, Object> h = new HashMap<>();
        h.put(World.COPY_HEADER, "0");
        if (planted) {
            h.put(RabbitHeaders.OUTCOME, "FAILED");
            h.put(RabbitHeaders.REASON, "planted by a hostile producer");
            h.put(RabbitHeaders.DEAD_LETTER_ID, "planted-" + id);
            h.put(RabbitHeaders.DEAD_LETTERED_AT, w.loop.random.nextLong(PLANTED_BEFORE_MS));
            h.put(RabbitHeaders.ORIGINAL_EXCHANGE, "elsewhere");
            h.put(RabbitHeaders.ORIGINAL_ROUTING_KEY, "order.placed");
            if (w.loop.chance(0.5)) {
                h.put(RabbitHeaders.DEAD_LETTER_SIGNATURE, "v1.forged-signature");
            }
        } else {
            forgeCopyHeaders(h);
        }
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2).messageId(id).headers(h)
                .build();
        w.loop.trace.event("hostile producer -> " + id + " into " + queue);
        SimOperators.count(planted ? "hostile: planted dead letter" : "hostile: forged retry copy");
        w.broker.enqueue(q, w.broker.newMessage("", queue, props, (id + ":body").getBytes(StandardCharsets.UTF_8)));
    }

    /** {@return whether the hostile message {@code id} of {@code kind} may have been applied: once replayed} */
    boolean mayApply(String id, String kind) {
        return (kind.equals(FORGED) || kind.equals(PLANTED)) && w.reads.replaysStored.getOrDefault(id, 0) > 0;
    }

    /** The purge's pin came from a dead-letter time no connector of the run stamps: a planted letter held it back. */
    void pinned(Instant oldest) {
        if (oldest.toEpochMilli() < PLANTED_BEFORE_MS) {
            w.loop.trace.violation("the ledger purge was held back by a dead-letter time of " + oldest
                    + ", which only a planted, unverified dead letter carries");
        }
    }
}
