package dev.onceonly.internal.observability;

import java.util.List;

/**
 * Every metric OnceOnly records: its name, type, unit, tags and meaning. Both adapters, OpenTelemetry
 * ({@link GuardMetrics}, {@link OutboxMetrics}) and MicroProfile Metrics ({@link MpGuardMetrics},
 * {@link MpOutboxMetrics}), create their instruments from these constants, so the names an operator
 * scrapes cannot drift from the ones documented in docs/observability.md, which is rendered from here.
 */
public enum MetricCatalogue {

    /** Messages guarded, one per final outcome. */
    MESSAGES("onceonly.messages", Type.COUNTER, List.of(Tag.CONSUMER, Tag.OUTCOME, Tag.LAYER, Tag.RETRYABLE),
            "Messages guarded, by consumer, outcome, the layer that decided and whether another delivery may succeed"),
    /** The guard's own time per message. */
    GUARD_DURATION("onceonly.guard.duration", Type.TIMER, List.of(Tag.CONSUMER, Tag.OUTCOME),
            "Time the guard itself spent on a message (claim, ledger insert, finalisation), handler excluded"),
    /** Leases the watchdog renewed. */
    LEASE_RENEWALS("onceonly.lease.renewals", Type.COUNTER, List.of(Tag.CONSUMER),
            "Claim leases renewed by the watchdog while their handler ran"),
    /** Claims lost while their handler ran. */
    LEASE_LOST("onceonly.lease.lost", Type.COUNTER, List.of(Tag.CONSUMER),
            "Claims found gone or taken over while their handler ran: the lease expired"),
    /** Claim store failures. */
    STORE_ERRORS("onceonly.store.errors", Type.COUNTER, List.of(Tag.CONSUMER, Tag.OPERATION),
            "Claim store failures, by operation"),
    /** The ledger's answers. */
    LEDGER_DECISIONS("onceonly.ledger.decisions", Type.COUNTER, List.of(Tag.CONSUMER, Tag.DECISION),
            "Ledger insert answers, by decision"),
    /** Messages the connector dead-lettered. */
    DEAD_LETTERS("onceonly.dead.letters", Type.COUNTER, List.of(Tag.CHANNEL, Tag.REASON),
            "Messages the onceonly-rabbitmq connector dead-lettered, counted once the broker confirmed each, by channel and reason"),
    /** Outbox rows published. */
    OUTBOX_RELAYED("onceonly.outbox.relayed", Type.COUNTER, List.of(Tag.PATH),
            "Outbox rows published and marked sent, by path"),
    /** Outbox rows the broker refused. */
    OUTBOX_REFUSED("onceonly.outbox.refused", Type.COUNTER, List.of(Tag.PARKED),
            "Outbox rows the broker refused, and whether the row is now parked"),
    /** From an outbox row's commit to the broker's confirm. */
    OUTBOX_RELAY_DURATION("onceonly.outbox.relay.duration", Type.TIMER, List.of(Tag.PATH),
            "From an outbox row's commit (its write, for swept rows) to the broker's confirm"),
    /** Outbox rows waiting. */
    OUTBOX_PENDING("onceonly.outbox.pending", Type.GAUGE, List.of(),
            "Outbox rows waiting to be published, as the last sweep counted them"),
    /** Outbox rows parked. */
    OUTBOX_PARKED("onceonly.outbox.parked", Type.GAUGE, List.of(),
            "Outbox rows parked after repeated refusals, as the last sweep counted them");

    /** How a metric is recorded. */
    public enum Type {
        /** A count that only grows. Prometheus: {@code <name>_total}. */
        COUNTER,
        /**
         * Durations in seconds: an OpenTelemetry histogram, a MicroProfile timer. Prometheus:
         * {@code <name>_seconds_count}, {@code _sum}, and {@code _max} with {@code quantile} series
         * (MicroProfile Metrics) or {@code _bucket} series (OpenTelemetry through a collector).
         */
        TIMER,
        /** The latest value. Prometheus: {@code <name>}. */
        GAUGE
    }

    /** A tag (an OpenTelemetry attribute, a Prometheus label) and the values it takes. */
    public enum Tag {
        /** The consumer's name. */
        CONSUMER("consumer", "the consumer's name (`@IdempotentMessage(consumer)`)"),
        /** The guard's decision. */
        OUTCOME("outcome", "`PROCESSED`, `DUPLICATE`, `BUSY`, `FAILED`, `RETRY`, `CONFLICT`, `REJECTED`"),
        /** The layer that decided. */
        LAYER("layer", "`CLAIM_STORE`, `LEDGER` (which layer caught a duplicate, a conflict, a busy key), `NONE`"),
        /** Whether another delivery may succeed. */
        RETRYABLE("retryable", "`false`: the message is dead-lettered at once (`CONFLICT`, `REJECTED`, a `FAILED` the retry rule "
                + "says is not worth retrying); `true` otherwise"),
        /** The claim store's operation that failed. */
        OPERATION("operation", "`claim`, `complete`, `release`, `extend`"),
        /** The ledger's answer. */
        DECISION("decision", "`INSERTED`, `DUPLICATE`, `CONFLICT`, `RETRY`"),
        /** The connector's incoming channel. */
        CHANNEL("channel", "the incoming channel's name (`mp.messaging.incoming.<channel>`)"),
        /** Why a message was dead-lettered. */
        REASON("reason", "`max-attempts` (a failure retried to the last attempt), `not-retryable` (a failure the retry rule "
                + "does not retry), `conflict`, `rejected` (the guard's outcomes), `unsigned-copy` (a retry copy without the "
                + "connector's signature)"),
        /** How an outbox row was published. */
        PATH("path", "`after-commit` (right after its transaction), `sweep` (found later by the sweep)"),
        /** Whether a refused outbox row is now parked. */
        PARKED("parked", "`true`, `false`");

        private final String key;
        private final String meaning;

        Tag(String key, String values) {
            this.key = key;
            this.meaning = values;
        }

        /** {@return the tag's name as recorded and scraped} */
        public String key() {
            return key;
        }

        /** {@return the values the tag takes, in Markdown} */
        public String meaning() {
            return meaning;
        }
    }

    private final String otelName;
    private final Type type;
    private final List<Tag> tags;
    private final String description;

    MetricCatalogue(String otelName, Type type, List<Tag> tags, String description) {
        this.otelName = otelName;
        this.type = type;
        this.tags = tags;
        this.description = description;
    }

    /** {@return the dotted name, as OpenTelemetry records it and MicroProfile Metrics registers it} */
    public String otelName() {
        return otelName;
    }

    /** {@return how the metric is recorded} */
    public Type type() {
        return type;
    }

    /** {@return the tags every point carries, in this order} */
    public List<Tag> tags() {
        return tags;
    }

    /** {@return what the metric means, one sentence} */
    public String description() {
        return description;
    }

    /** {@return the unit: {@code s} for a timer, none otherwise} */
    public String unit() {
        return type == Type.TIMER ? "s" : "";
    }

    /**
     * {@return the Prometheus name the metric's series start with: dots become underscores, a counter
     * ends in {@code _total}, a timer in {@code _seconds} (its series add {@code _count}, {@code _sum}, ...)}
     */
    public String prometheusName() {
        String base = otelName.replace('.', '_');
        return switch (type) {
            case COUNTER -> base + "_total";
            case TIMER -> base + "_seconds";
            case GAUGE -> base;
        };
    }
}
