package dev.onceonly.internal.rabbitmq;

import dev.onceonly.rabbitmq.OutgoingRabbitMetadata;

import dev.onceonly.internal.config.Property;
import dev.onceonly.internal.config.Property.Type;
import dev.onceonly.internal.config.PropertySet;

import java.util.Map;

/**
 * The catalogue of the {@code onceonly-rabbitmq} connector's properties: the broker connection's,
 * and those of incoming and outgoing channels.
 * A property's key is what a channel's configuration holds ({@code prefetch}); its alias, SmallRye's
 * RabbitMQ connector's name for the same setting, is read in the same place.
 */
public final class ChannelProperties {

    private ChannelProperties() {
    }

    /** The connector's name, which its connector-wide properties are named after (the connector's {@code NAME}). */
    static final String CONNECTOR = "onceonly-rabbitmq";
    /** The connector-wide prefix MicroProfile Reactive Messaging gives this connector's settings. */
    public static final String CONNECTOR_PREFIX = "mp.messaging.connector." + CONNECTOR + ".";
    /** This connector's own connector-wide prefix of the connection's settings, settable from the environment. */
    public static final String WIDE_PREFIX = "onceonly.rabbitmq.";
    /** A connection key → SmallRye's connector-wide, environment-settable name of it. */
    public static final Map<String, String> SMALLRYE_WIDE_NAMES = Map.of("addresses", "rabbitmq-addresses",
            "host", "rabbitmq-host", "port", "rabbitmq-port", "username", "rabbitmq-username", "password", "rabbitmq-password",
            "virtual-host", "rabbitmq-virtual-host", "tls", "rabbitmq-ssl");

    private static final String CHANNEL = "mp.messaging.<incoming|outgoing>.<channel>.";
    private static final String[] EXCHANGE_TYPES = {"direct", "fanout", "topic", "headers"};

    /** The broker connection: every channel's, and the outbox relay's. */
    public static final PropertySet CONNECTION = new PropertySet("Connector: the broker connection", "rabbitmq.BrokerConfig",
            "One set of broker settings reaches every connection the library opens: incoming and outgoing channels and "
                    + "the outbox relay. Set a key for every connection as `" + CONNECTOR_PREFIX + "<key>` or as `"
                    + WIDE_PREFIX + "<key>` (which environment variables can set: `ONCEONLY_RABBITMQ_HOST`); both set "
                    + "to different values stop the start, naming both. A channel's own `" + CHANNEL
                    + "<key>` overrides them for that channel. SmallRye's connector-wide names are read too: "
                    + "`rabbitmq-host` and the like (listed with each key).",
            key -> CHANNEL + key);

    static final Property ADDRESSES = CONNECTION.add(Property.of("addresses", Type.LIST, null,
            "Several broker nodes, `mq1:5672,mq2:5672` (a node without a port gets the default one; IPv6 in "
                    + "brackets); replaces `host` and `port` (as in SmallRye's connector). Each connection, and each "
                    + "recovery, tries them in a shuffled order, so instances spread over a cluster and a connection "
                    + "recovers to any node that answers."));
    static final Property HOST = CONNECTION.add(Property.of("host", Type.TEXT, "localhost", "The broker's host."));
    static final Property PORT = CONNECTION.add(Property.whole("port", 5672, 1, 65_535, "The broker's port.")
            .shownAs("`5672` (`5671` with TLS)"));
    static final Property USERNAME = CONNECTION.add(Property.of("username", Type.TEXT, "guest", "The user.").alsoAs("user"));
    static final Property PASSWORD = CONNECTION.add(Property.of("password", Type.SECRET, "guest",
            "The password; never logged."));
    static final Property VIRTUAL_HOST = CONNECTION.add(Property.of("virtual-host", Type.TEXT, "/", "The virtual host."));
    static final Property CREDENTIALS_PROVIDER = CONNECTION.add(Property.of("credentials-provider-name", Type.TEXT, null,
            "Rotating credentials, as in SmallRye's connector: the `@Named` name of a CDI bean of type "
                    + "amqp-client's `com.rabbitmq.client.impl.CredentialsProvider` (e.g. one reading a vault); asked "
                    + "at every connection and every recovery, so a rotated password takes effect at the next "
                    + "reconnection without a restart. Not together with `username`/`password`."));
    static final Property TLS = CONNECTION.add(Property.flag("tls", false,
            "TLS with the JVM's (the server's) trust store.").alsoAs("ssl"));
    static final Property VERIFY_HOSTNAME = CONNECTION.add(Property.flag("tls.verify-hostname", true,
            "The broker's certificate must name the host connected to."));
    static final Property RECOVERY_INTERVAL = CONNECTION.add(Property.duration("network-recovery-interval", "5s",
            "Pause between reconnection attempts (first connection and automatic recovery); a bare number is milliseconds."));
    static final Property CONNECTION_TIMEOUT = CONNECTION.add(Property.duration("connection-timeout", "10s",
            "Bound on opening a connection (TCP connect and AMQP handshake); a bare number is milliseconds."));
    static final Property INSTANCE_ID = CONNECTION.add(Property.of("instance-id", Type.TEXT, null,
            "This instance in the connection names the broker shows: `onceonly:<channel>:consume@<instance-id>`.")
            .shownAs("`<host>-<pid>` (host from `HOSTNAME`, else the local host name)"));

    /** Settings of incoming and outgoing channels alike. */
    public static final PropertySet COMMON = new PropertySet("Connector: every channel", "rabbitmq.ChannelConfig",
            "Set per channel, or for every channel as `" + CONNECTOR_PREFIX + "<key>`. Reactive Messaging's own "
                    + "`concurrency` attribute makes that many copies of an incoming channel (`<channel>$1`...).",
            key -> CHANNEL + key);

    static final Property DECLARE = COMMON.add(Property.flag("declare", true,
            "Declare exchanges, queues and bindings (durable), including the dead-letter topology."));
    static final Property EXCHANGE_NAME = COMMON.add(Property.of("exchange.name", Type.TEXT, null,
            "Incoming: the exchange the queue is bound to; outgoing: the exchange to publish to.")
            .shownAs("none (the default exchange)"));
    static final Property EXCHANGE_TYPE = COMMON.add(Property.choice("exchange.type", "topic", "The exchange's type.",
            EXCHANGE_TYPES));
    static final Property CONFIRM_TIMEOUT = COMMON.add(Property.duration("confirm-timeout", "10s",
            "Wait for a publisher confirm (outgoing publishes, dead letters, retries)."));
    static final Property DRAIN_TIMEOUT = COMMON.add(Property.duration("drain-timeout", "10s",
            "Shutdown: wait for messages being processed (incoming) or confirmed (outgoing)."));

    /** Settings of incoming channels. */
    public static final PropertySet INCOMING = new PropertySet("Connector: incoming channels", "rabbitmq.ChannelConfig",
            "", key -> "mp.messaging.incoming.<channel>." + key);

    static final Property QUEUE_NAME = INCOMING.add(Property.of("queue.name", Type.TEXT, null,
            "The queue; with delay queues possible, short enough to leave room for their suffix (255 characters in all).")
            .shownAs("the channel name"));
    static final Property QUEUE_TYPE = INCOMING.add(Property.choice("queue.type", "classic", "`classic` or `quorum`.",
            "classic", "quorum").alsoAs("queue.x-queue-type"));
    static final Property ROUTING_KEYS = INCOMING.add(Property.of("routing-keys", Type.LIST, "#",
            "Binding keys of the queue on `exchange.name`, each at most 255 characters."));
    static final Property PREFETCH = INCOMING.add(Property.whole("prefetch", 16, 1, 65_535,
            "Unacked deliveries per consumer, held retries included.").alsoAs("max-outstanding-messages")
            .shownAs("`16`; with `batch=true`, twice `batch-size` when that is more"));
    static final Property CLAIM_AHEAD = INCOMING.add(Property.whole("claim-ahead", 0, 0, 1_024,
            "For a guarded `@Incoming` method whose key comes from the message alone: when the guard claims "
                    + "a delivery's key, it claims in the same round trip (a Redis pipeline) the keys of up to "
                    + "`claim-ahead − 1` deliveries received behind it (within `prefetch`); each of those is then "
                    + "guarded without a claim of its own, and the channel hands deliveries over on a thread of its "
                    + "own. `0` or `1`: each message is claimed in its turn. It shortens the guard's wait, not its CPU "
                    + "(`BENCHMARKS.md`). What it costs: if the instance dies, up to `claim-ahead` messages it had "
                    + "claimed are `BUSY` elsewhere until their leases end; the batch shows as one "
                    + "`onceonly.claim-ahead` span."));
    static final Property BATCH = INCOMING.add(Property.flag("batch", false,
            "Hand the `@Incoming` method batches: one call per up to `batch-size` deliveries, its first parameter "
                    + "a `java.util.List` of their payloads (the name SmallRye's Kafka connector uses). A guarded method is "
                    + "guarded per message: each delivery is decided and settled on its own (`docs/batches.md`). The method's "
                    + "parameter and this attribute must agree, else the deployment fails."));
    static final Property BATCH_SIZE = INCOMING.add(Property.whole("batch-size", 32, 1, 1_024,
            "With `batch=true`: the most deliveries in one batch; at most `prefetch` (the broker sends no more unacked)."));
    static final Property BATCH_LINGER = INCOMING.add(Property.duration("batch-linger", "10ms",
            "With `batch=true`: how long a partial batch waits for more deliveries before it is handed over: from `1ms` "
                    + "(about what is there) to `1s`."));
    static final Property MAX_ATTEMPTS = INCOMING.add(Property.whole("max-attempts", 5, 1, 1_000,
            "Deliveries of a failing message before it is dead-lettered."));
    static final Property RETRY_DELAY = INCOMING.add(Property.duration("retry-delay", "1s",
            "How long a BUSY or RETRY delivery is held before it goes back (fixed: they are not attempts), "
                    + "and the backoff after a FAILED first attempt. At most `1d`."));
    static final Property RETRY_MULTIPLIER = INCOMING.add(Property.of("retry-multiplier", Type.DECIMAL, "2",
            "A FAILED delivery's backoff grows by this factor per attempt: with the defaults about 1 s, 2 s, "
                    + "4 s, 8 s before attempts 2 to 5 (each drawn between half and all of it). `1` to `10`; `1` keeps "
                    + "it fixed at `retry-delay`."));
    static final Property RETRY_MAX_DELAY = INCOMING.add(Property.duration("retry-max-delay", null,
            "Cap of a FAILED delivery's backoff; from `retry-delay` to `1d`.")
            .shownAs("`1m`, or `retry-delay` when that is longer"));
    static final Property RETRY_BROKER_DELAY_ABOVE = INCOMING.add(Property.duration("retry-broker-delay-above", "5s",
            "A backoff longer than this waits in a delay queue the broker holds "
                    + "(`<queue>.onceonly.delay.<ms>`) instead of unacked in the consumer; at least `1s`. Set it above "
                    + "`retry-max-delay` to keep every delay in the consumer. With a delay queue possible, "
                    + "`queue.name` is limited to what leaves room for the suffix (255 characters in all)."));
    static final Property DEAD_LETTER_EXCHANGE = INCOMING.add(Property.of("dead-letter.exchange", Type.TEXT, null,
            "Where dead letters are published; must differ from `exchange.name`.").shownAs("`<queue>.dlx`")
            .alsoAs("dead-letter-exchange"));
    static final Property DEAD_LETTER_EXCHANGE_TYPE = INCOMING.add(Property.choice("dead-letter.exchange.type", "fanout",
            "The dead-letter exchange's type.", EXCHANGE_TYPES).alsoAs("dead-letter-exchange-type"));
    static final Property DEAD_LETTER_QUEUE = INCOMING.add(Property.of("dead-letter.queue", Type.TEXT, null,
            "The dead-letter queue, declared and bound when `declare=true`.").shownAs("`<queue>.dlq`")
            .alsoAs("dead-letter-queue-name"));
    static final Property DEAD_LETTER_ROUTING_KEY = INCOMING.add(Property.of("dead-letter.routing-key", Type.TEXT, null,
            "Routing key dead letters are published with.").shownAs("`<queue>`").alsoAs("dead-letter-routing-key"));
    static final Property DELIVERY_LIMIT = INCOMING.add(Property.whole("queue.delivery-limit", 20, 1, 1_000_000,
            "Quorum queues: the broker's `x-delivery-limit` (returns the connector did not make); at least `max-attempts`.")
            .shownAs("`max(20, max-attempts)`").alsoAs("queue.x-delivery-limit"));
    static final Property PAYLOAD_TYPE = INCOMING.add(Property.choice("payload-type", "string",
            "`string` (UTF-8 text) or `bytes`; must match the method's payload parameter (a mismatch fails "
                    + "every delivery, which ends in the dead-letter queue).", "string", "bytes"));
    static final Property COPY_SIGNING_KEY = INCOMING.add(Property.of("copy-signing-key", Type.SECRET, null,
            "Key of the HMAC that proves a retry copy was made by this connector; required on every incoming "
                    + "channel (set it here or once for every channel as `" + CONNECTOR_PREFIX + "copy-signing-key`), "
                    + "at least 32 bytes, the same on every instance consuming the queue (secret; never logged). "
                    + "The string as written is the key: generate one with `openssl rand -base64 32`. A missing or "
                    + "shorter key stops the start. There is no default: a key derived from the broker password, as "
                    + "before, let anyone who read one signed copy test passwords offline. To change it without "
                    + "losing the copies in flight, see `copy-signing-previous-keys`.")
            .shownAs("none: required"));
    static final Property COPY_SIGNING_PREVIOUS_KEYS = INCOMING.add(Property.of("copy-signing-previous-keys", Type.SECRET, null,
            "Keys a retry copy may also be signed with, comma-separated (each trimmed; an empty entry stops "
                    + "the start), secret like `copy-signing-key`: copies are signed with `copy-signing-key` only and "
                    + "accepted with it or any of these, so a copy signed before a key change is still processed. To "
                    + "rotate with a rolling restart: **1.** on every instance, add the new key here; **2.** on every "
                    + "instance, set `copy-signing-key` to the new key and list the old key here in its place; **3.** "
                    + "once no copy signed with the old key can be left (at least `retry-max-delay` after step 2, plus "
                    + "the time the queue's backlog takes to drain), remove it. If no instance with the old "
                    + "configuration runs beside one with the new, step 2 alone will do. Previous keys may be "
                    + "shorter than 32 bytes, so that a short key can be rotated out; remove it at step 3."));
    static final Property SINGLE_ACTIVE_CONSUMER = INCOMING.add(Property.flag("queue.single-active-consumer", false,
            "`x-single-active-consumer`: the broker delivers to one consumer of the queue at a time, the "
                    + "others (other instances, `concurrency` copies) wait as hot standbys and take over when it goes; "
                    + "for handlers that must see a queue's messages in order."));
    static final Property MESSAGE_TTL = INCOMING.add(Property.duration("queue.message-ttl", null,
            "`x-message-ttl`: a message not delivered within it (`30s`, `24h`, or milliseconds) is "
                    + "dead-lettered by the broker into the channel's dead-letter queue, with the broker's `x-death` "
                    + "header (reason `expired`), not the connector's `x-onceonly-*` ones. At most 4294967295 ms.").alsoAs("queue.ttl"));
    static final Property MAX_LENGTH = INCOMING.add(Property.whole("queue.max-length", 1, Integer.MAX_VALUE,
            "`x-max-length`: ready messages the queue holds at most (unacked ones do not count).").shownAs("none"));
    static final Property OVERFLOW = INCOMING.add(Property.choice("queue.overflow", "drop-head",
            "`x-overflow`, with `queue.max-length` only: `drop-head` dead-letters the oldest message "
                    + "(`x-death` reason `maxlen`), `reject-publish` refuses the new one with a publisher nack (an "
                    + "outgoing channel's send fails; a retry copy is requeued instead, nothing lost), "
                    + "`reject-publish-dlx` refuses it and dead-letters it (classic queues only: quorum queues do not "
                    + "support it, and the start fails naming the property). A quorum queue checks the limit after a "
                    + "publish is applied and may take one message past it.",
            QueueArguments.OVERFLOWS).shownAs("`drop-head` (the broker's)"));

    /** Settings of outgoing channels. */
    public static final PropertySet OUTGOING = new PropertySet("Connector: outgoing channels", "rabbitmq.ChannelConfig",
            "", key -> "mp.messaging.outgoing.<channel>." + key);

    static final Property ROUTING_KEY = OUTGOING.add(Property.of("routing-key", Type.TEXT, null,
            "Routing key unless the message's `OutgoingRabbitMetadata` names one; at most 255 characters.")
            .shownAs("the channel name").alsoAs("default-routing-key"));
    static final Property PERSISTENT = OUTGOING.add(Property.flag("persistent", true, "Delivery mode 2."));
    static final Property MANDATORY = OUTGOING.add(Property.flag("mandatory", true,
            "A message no queue takes fails its send (`Emitter.send` completes exceptionally, the message is "
                    + "nacked) instead of being confirmed and dropped."));
    static final Property MAX_INFLIGHT = OUTGOING.add(Property.whole("max-inflight", 256, 1, 65_535,
            "Publishes awaiting their confirm at once.").alsoAs("max-inflight-messages"));
}
