package dev.onceonly.internal.config;

import dev.onceonly.internal.config.Property.Type;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.result.ResultSettings;
import dev.onceonly.internal.support.Durations;

/**
 * The catalogue of the per-consumer properties that {@code ConsumerConfig} reads. A key is looked up
 * as {@code onceonly.consumers.<consumer>.<key>}, then as {@code onceonly.<key>} (every consumer),
 * then on the {@code @IdempotentMessage} annotation, then the default.
 */
public final class ConsumerProperties {

    private ConsumerProperties() {
    }

    /** The prefix of a consumer's own properties, before the consumer's name. */
    static final String CONSUMERS = OnceOnlyConfig.PREFIX + "consumers.";

    /** The per-consumer settings. */
    public static final PropertySet CONSUMER = new PropertySet("Consumers", "config.ConsumerConfig",
            "Set for one consumer as `onceonly.consumers.<consumer>.<key>`, or for every consumer as `onceonly.<key>`; "
                    + "looked up in that order, then on the `@IdempotentMessage` annotation, then the default. The "
                    + "consumer is the annotation's `consumer`, else `<class simple name>.<method>`.",
            key -> CONSUMERS + "<consumer>." + key);

    static final Property KEY_STRATEGY = CONSUMER.add(Property.choice("key-strategy", null,
            "Where the key comes from (see \"Key strategies\" in the README).",
            "content", "message-id", "header", "json-pointer", "parameter")
            .shownAs("the annotation's `keyStrategy`; else `parameter` with an `@IdempotencyKey` parameter, else `content`"));
    static final Property KEY_HEADER = CONSUMER.add(Property.of("key-header", Type.LIST, null,
            "For `header`: a header name, or several comma-separated for a composite key (see \"Composite "
                    + "keys\" in the README).")
            .shownAs("the annotation's `keyHeader`"));
    static final Property KEY_POINTER = CONSUMER.add(Property.of("key-pointer", Type.LIST, null,
            "For `json-pointer`: a JSON Pointer such as `/orderId`, or several comma-separated for a "
                    + "composite key (see \"Composite keys\" in the README).")
            .shownAs("the annotation's `keyPointer`"));
    static final Property MISSING_KEY = CONSUMER.add(Property.choice("missing-key", "reject",
            "A message without the key: `reject` it, or fall back to the `content` key.", "reject", "content"));
    static final Property LEASE = CONSUMER.add(Property.duration("lease", null,
            "Claim lease while the handler runs, renewed every lease/6 to lease/3 as long as it runs (a handler longer "
                    + "than the lease is fine); after a crash, the dead instance's messages are BUSY for at most this long. "
                    + "At least " + Durations.format(ConsumerSettings.MIN_LEASE) + ".")
            .shownAs("the annotation's `lease`, else `" + Durations.format(ConsumerSettings.DEFAULT_LEASE) + "`"));
    static final Property RETENTION = CONSUMER.add(Property.duration("retention", null,
            "How long a processed key is remembered; not shorter than the lease.")
            .shownAs("the annotation's `retention`, else `" + Durations.format(ConsumerSettings.DEFAULT_RETENTION) + "`"));
    static final Property LEDGER = CONSUMER.add(Property.flag("ledger", false,
            "Write the `ProcessedMessage` row in the business transaction."));
    static final Property STORE_FAILURE = CONSUMER.add(Property.choice("store-failure", "reject",
            "The claim store down: `reject` (outcome `RETRY`) or `ledger-only` (needs `ledger=true`).", "reject", "ledger-only"));
    static final Property RETRY_FOR = CONSUMER.add(Property.of("retry-for", Type.LIST, null,
            "Exception classes worth retrying although a more general class is in `no-retry-for` or the defaults; "
                    + "`java.lang.Exception` turns the defaults off.")
            .shownAs("the annotation's `retryFor`, else none"));
    static final Property NO_RETRY_FOR = CONSUMER.add(Property.of("no-retry-for", Type.LIST, null,
            "Exceptions not worth retrying: comma-separated class names (nested classes with `$`); see "
                    + "\"Which failures are retried\" in the README.")
            .shownAs("the annotation's `noRetryFor`, else none (the defaults still apply)"));
    static final Property CONFLICT = CONSUMER.add(Property.choice("conflict", "strict",
            "Same key, different body: `strict` (`CONFLICT`) or `ignore` (`DUPLICATE`).", "strict", "ignore")
            .shownAs("the annotation's `conflict`, else `strict`"));
    static final Property CONFLICT_FIELDS = CONSUMER.add(Property.of("conflict-fields", Type.LIST, null,
            "With `strict`: compare only the values at these comma-separated JSON Pointers; not with `ignore`, nor for a "
                    + "`content` consumer (the global `onceonly.conflict-fields` skips those).")
            .shownAs("the annotation's `conflictFields`, else none (the whole body)"));
    static final Property RESULT_KEEP = CONSUMER.add(Property.flag("result.keep", false,
            "Store what the method returns (as JSON) with its key, and give it to its duplicates instead of nothing; "
                    + "see [stored results](results.md).")
            .shownAs("`true` when the method returns `dev.onceonly.api.Replayable`, else `false`"));
    static final Property RESULT_MAX_SIZE = CONSUMER.add(Property.whole("result.max-size", ResultSettings.DEFAULT_MAX_BYTES, 1,
            ResultSettings.MAX_MAX_BYTES,
            "With `result.keep`: the largest result stored, in bytes of its JSON; a larger one is not stored (`ONCE0902W`) "
                    + "and the call still succeeds."));
    static final Property RESULT_RETENTION = CONSUMER.add(Property.duration("result.retention", null,
            "With `result.keep`: how long a stored result is given to duplicates; in the ledger it goes with its row at the "
                    + "latest.")
            .shownAs("the consumer's `retention`"));
}
