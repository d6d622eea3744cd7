package dev.onceonly.simulation;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Outcome;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import dev.onceonly.rabbitmq.RabbitHeaders;
import dev.onceonly.spi.Dispatch;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Every broker action the connector takes for a delivery, checked as it is taken against what the
 * rules (docs/connector.md, "Outcomes and broker actions") give for the application's settlement of
 * it, computed here from what the simulation knows, not by the connector's own code:
 * <ul>
 *   <li>PROCESSED, DUPLICATE or no guard, acked: an ack;</li>
 *   <li>BUSY and RETRY: held for the retry delay, then requeued, or copied without spending an
 *       attempt where a requeue counts;</li>
 *   <li>a failure worth retrying with attempts left: a copy that counts the attempt;</li>
 *   <li>a failure in {@code no-retry-for} (of a guarded consumer: the retry rule is the guard's), a failure at the last attempt, CONFLICT and REJECTED: a
 *       dead letter with that outcome, the attempt and a reason; a valid message's failure only once
 *       its handler failures and the broker's own returns add up to {@link Mode#MAX_ATTEMPTS}.</li>
 * </ul>
 * A requeue is always allowed but after an ack decision (a stop gives back what it holds, a failed
 * publish leaves the original requeued), and so is a copy that spends no attempt while its instance
 * stops. A delivery is known by the body array the simulated broker handed over (a fresh one per
 * delivery), which the connector passes on unchanged to the copies and dead letters it publishes.
 */
final class SettlementWatch {

    /** What the rules give for a settled delivery. */
    enum Expected { ACK, HOLD, RETRY, DEAD }

    /** One delivery, from the broker handing it over. */
    static final class Delivered {
        /** What the consumer is handed: a copy of the message's body, this delivery's own. */
        final byte[] body;
        private final String chain;
        private Expected expected;
        private String outcome;
        private boolean poison;
        private int attempt;
        private long decidedAt;
        private SimInstance instance;
        private boolean published;

        private Delivered(String chain, byte[] body) {
            this.chain = chain;
            this.body = body.clone();
        }
    }

    private final World w;
    private final Map<byte[], Delivered> byBody = new IdentityHashMap<>();

    SettlementWatch(World w) {
        this.w = w;
    }

    /**
     * The broker hands {@code m} over from {@code q}: watched from now on, with a copy of the body its
     * own. A hostile producer's forged retry copy is refused before the application sees it: dead-lettered
     * {@code REJECTED} at the attempt the broker counted, its forged count not believed.
     */
    Delivered delivered(SimBroker.Queue q, SimBroker.Message m) {
        Delivered d = new Delivered(w.chain(m.messageId(), m.body, m.props.getHeaders()), m.body);
        byBody.put(d.body, d);
        String id = w.logicalId(m.messageId(), new String(m.body, java.nio.charset.StandardCharsets.UTF_8));
        if (m.exchange.isEmpty() && m.header(RabbitHeaders.REPLAY_OF) == null
                && SimHostileProducer.FORGED.equals(w.published.get(id))) {
            d.attempt = 1 + (q.quorum && m.redelivered ? m.deliveryCount : 0);
            dead(d, "REJECTED", false);
        }
        return d;
    }

    /**
     * The application of {@code in} is about to settle delivery {@code dispatch}: acked ({@code nacked}
     * null) or nacked, after the guard's {@code guard} decision (null when none was handed to the
     * delivery) with {@code failure} for a FAILED one. Only RabbitMQ deliveries are watched.
     */
    void decided(SimInstance in, Dispatch dispatch, GuardEvent guard, Throwable failure, Throwable nacked) {
        if (!(dispatch.message() instanceof IncomingRabbitMetadata meta)) {
            return;
        }
        int attempt = meta.attempt();
        Delivered d = byBody.get(meta.body());
        if (d == null) {
            w.loop.trace.violation(in.name + " settled a delivery the broker did not hand over (was its body copied?)");
            return;
        }
        d.instance = in;
        d.attempt = attempt;
        d.decidedAt = w.loop.now();
        if (guard != null && guard.outcome().isRefusal()) {
            switch (guard.outcome()) {
                case BUSY, RETRY -> d.expected = Expected.HOLD;
                default -> dead(d, guard.outcome().name(), false);
            }
        } else if (nacked != null) {
            failed(d, nacked, guard != null);
        } else if (guard != null && guard.outcome() == Outcome.FAILED) {
            failed(d, failure, true);
        } else {
            d.expected = Expected.ACK;
        }
    }

    /** @param guarded whether a guard decided: its consumer's {@code no-retry-for} applies (no guard, no retry rule) */
    private void failed(Delivered d, Throwable t, boolean guarded) {
        Throwable root = t;
        while (root != null && root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (guarded && root instanceof SimInstance.PoisonException) {
            dead(d, "FAILED", true);
        } else if (d.attempt >= Mode.MAX_ATTEMPTS) {
            dead(d, "FAILED", false);
        } else {
            d.expected = Expected.RETRY;
        }
    }

    private static void dead(Delivered d, String outcome, boolean poison) {
        d.expected = Expected.DEAD;
        d.outcome = outcome;
        d.poison = poison;
    }

    /** The connector acked the delivery {@code d} (null: not watched). */
    void acked(Delivered d, String what) {
        if (d != null && !d.published && d.expected != Expected.ACK) {
            w.loop.trace.violation(what + " acked without a copy or dead letter published, where the rules give "
                    + (d.expected == null ? "no settlement yet (the application did not settle it)" : describe(d)));
        }
    }

    /** The connector requeued the delivery {@code d} (null: not watched). */
    void requeued(Delivered d, String what) {
        if (d == null || d.expected == null) {
            return;
        }
        if (d.expected == Expected.ACK) {
            w.loop.trace.violation(what + " requeued after the application acked it (" + describe(d) + ")");
        } else if (d.expected == Expected.HOLD) {
            heldLongEnough(d, what + " requeued");
        }
    }

    /** The connector published a copy of a delivery or a dead letter (other publishes are not watched). */
    void published(Map<String, Object> headers, byte[] body, String what) {
        Object outcome = headers == null ? null : headers.get(RabbitHeaders.OUTCOME);
        Object copyAttempts = headers == null ? null : headers.get(RabbitHeaders.RETRY_ATTEMPTS);
        if (outcome == null && copyAttempts == null) {
            return;
        }
        Delivered d = byBody.get(body);
        if (d == null) {
            w.loop.trace.violation(what + ": a copy or dead letter of a body no delivery carried");
            return;
        }
        d.published = true;
        if (outcome != null) {
            deadLetter(d, headers, outcome.toString(), what);
        } else if (d.expected != null) {
            copy(d, ((Number) copyAttempts).intValue(), what);
        }
    }

    private void copy(Delivered d, int attempts, String what) {
        boolean stopping = d.instance.stopping();
        if (attempts == d.attempt && d.expected != Expected.RETRY) {
            w.loop.trace.violation(what + ": a copy that spends attempt " + d.attempt + ", where the rules give " + describe(d));
        } else if (attempts == d.attempt - 1 && d.expected != Expected.HOLD && !stopping) {
            w.loop.trace.violation(what + ": a copy that spends no attempt, where the rules give " + describe(d));
        } else if (attempts != d.attempt && attempts != d.attempt - 1) {
            w.loop.trace.violation(what + ": a copy carrying " + attempts + " attempts of a delivery at attempt " + d.attempt);
        } else if (d.expected == Expected.HOLD) {
            heldLongEnough(d, what + " copied");
        }
    }

    private void deadLetter(Delivered d, Map<String, Object> headers, String outcome, String what) {
        if (d.expected != Expected.DEAD || !d.outcome.equals(outcome)) {
            w.loop.trace.violation(what + ": dead-lettered as " + outcome + " at attempt " + headers.get(RabbitHeaders.ATTEMPTS)
                    + ", where the rules give " + (d.expected == null ? "no settlement yet (the application did not settle it)" : describe(d)));
            return;
        }
        Object reason = headers.get(RabbitHeaders.REASON);
        if (reason == null || reason.toString().isBlank()
                || d.poison && !reason.toString().contains(SimInstance.PoisonException.class.getName())) {
            w.loop.trace.violation(what + ": dead letter " + outcome + " without the reason the rules give: " + reason);
        }
        if (!Integer.valueOf(d.attempt).equals(headers.get(RabbitHeaders.ATTEMPTS))) {
            w.loop.trace.violation(what + ": dead letter says attempt " + headers.get(RabbitHeaders.ATTEMPTS) + ", the delivery was attempt " + d.attempt);
        }
        int spent = w.failures(d.chain) + w.broker.returnsNotByConnector.getOrDefault(d.chain, 0);
        if (outcome.equals("FAILED") && !d.poison && spent < Mode.MAX_ATTEMPTS) {
            w.loop.trace.violation(what + ": dead-lettered as FAILED after " + w.failures(d.chain) + " handler failures and "
                    + w.broker.returnsNotByConnector.getOrDefault(d.chain, 0) + " returns by the broker: its attempts had not run out");
        }
    }

    /** A BUSY or RETRY delivery goes back no sooner than the retry delay after its settlement, unless its instance stops. */
    private void heldLongEnough(Delivered d, String what) {
        long held = w.loop.now() - d.decidedAt;
        if (held < w.mode.retryDelay().toNanos() && !d.instance.stopping()) {
            w.loop.trace.violation(what + " after " + held / 1_000 + " us, before the retry delay of " + w.mode.retryDelay().toMillis() + " ms");
        }
    }

    private static String describe(Delivered d) {
        return d.expected + (d.outcome == null ? "" : " " + d.outcome) + (d.poison ? " (no-retry-for)" : "") + " at attempt " + d.attempt;
    }
}
