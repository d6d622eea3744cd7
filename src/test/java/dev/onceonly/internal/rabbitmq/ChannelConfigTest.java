package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.impl.CredentialsProvider;
import com.rabbitmq.client.impl.DefaultCredentialsProvider;
import dev.onceonly.api.InvalidConfigurationException;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChannelConfigTest {

    /** A channel-scoped config as Reactive Messaging hands it to a connector. */
    private static ChannelConfig channel(ChannelConfig.Direction direction, String... keyValues) {
        return config("orders", direction, keyValues);
    }

    private static ChannelConfig channelNamed(String name, String... keyValues) {
        return config(name, ChannelConfig.Direction.INCOMING, keyValues);
    }

    private static ChannelConfig config(String name, ChannelConfig.Direction direction, String... keyValues) {
        Map<String, String> props = new HashMap<>();
        props.put("channel-name", name);
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        return TestChannelConfig.of(props, direction);
    }

    @Test
    void incomingDefaults() {
        IncomingSettings s = channel(ChannelConfig.Direction.INCOMING).incoming();
        assertEquals("orders", s.queue());
        assertEquals(QueueType.CLASSIC, s.queueType());
        assertEquals("", s.exchange());
        assertEquals(List.of("#"), s.routingKeys());
        assertEquals(16, s.prefetch());
        assertEquals("orders.dlx", s.deadLetterExchange());
        assertEquals("fanout", s.deadLetterExchangeType());
        assertEquals("orders.dlq", s.deadLetterQueue());
        assertEquals("orders", s.deadLetterRoutingKey());
        assertEquals(5, s.maxAttempts());
        assertEquals(new RetryBackoff(Duration.ofSeconds(1), Duration.ofMinutes(1), 2.0, Duration.ofSeconds(5)), s.backoff());
        assertEquals(Duration.ofSeconds(1), s.retryDelay());
        assertEquals(Duration.ofSeconds(10), s.drainTimeout());
        assertTrue(s.declare());
        assertEquals(PayloadType.STRING, s.payloadType());
        assertEquals("amqp://guest@localhost:5672/", s.connection().describe());
        assertEquals(Duration.ofSeconds(10), s.connection().connectionTimeout());
    }

    @Test
    void incomingValues() {
        IncomingSettings s = channel(ChannelConfig.Direction.INCOMING, "queue.name", "q1", "queue.type", "Quorum",
                "exchange.name", "ex", "exchange.type", "direct", "routing-keys", " a , b.c ", "prefetch", "50",
                "max-attempts", "7", "retry-delay", "250ms", "payload-type", "bytes",
                "tls", "true", "host", "mq", "virtual-host", "prod", "username", "app", "password", "s3cret").incoming();
        assertEquals(QueueType.QUORUM, s.queueType());
        assertEquals(List.of("a", "b.c"), s.routingKeys());
        assertEquals(50, s.prefetch());
        assertEquals(7, s.maxAttempts());
        assertEquals(Duration.ofMillis(250), s.retryDelay());
        assertEquals(PayloadType.BYTES, s.payloadType());
        assertEquals("q1.dlq", s.deadLetterQueue());
        assertEquals(List.of(new Address("mq", 5671)), s.connection().addresses(), "TLS changes the default port");
        assertEquals("amqps://app@mq:5671/prod", s.connection().describe());
        assertFalse(s.connection().toString().contains("s3cret"));
    }

    /** A configuration written for SmallRye's RabbitMQ connector gives the same settings under this connector. */
    @Test
    void batchesAreOffByDefaultAndWithinPrefetch() {
        assertNull(channel(ChannelConfig.Direction.INCOMING).incoming().batch());
        IncomingSettings s = channel(ChannelConfig.Direction.INCOMING, "batch", "true", "prefetch", "40").incoming();
        assertEquals(new IncomingSettings.Batching(32, Duration.ofMillis(10)), s.batch());
        assertEquals(40, s.prefetch());
        assertEquals(64, channel(ChannelConfig.Direction.INCOMING, "batch", "true").incoming().prefetch(),
                "prefetch not set: room for two batches");
        assertEquals(new IncomingSettings.Batching(8, Duration.ofMillis(1)), channel(ChannelConfig.Direction.INCOMING, "batch", "true",
                "batch-size", "8", "batch-linger", "1ms").incoming().batch());
        assertTrue(assertIncomingInvalid("batch-size", "batch", "true", "batch-size", "20", "prefetch", "16")
                .getMessage().contains("at most prefetch (16)"));
        assertIncomingInvalid("claim-ahead", "batch", "true", "batch-size", "8", "claim-ahead", "4");
        assertIncomingInvalid("batch-linger", "batch", "true", "batch-size", "8", "batch-linger", "2s");
        assertIncomingInvalid("batch", "batch", "yes");
        // Without batch=true the batch attributes are not read.
        assertNull(channel(ChannelConfig.Direction.INCOMING, "batch-size", "64").incoming().batch());
    }

    @Test
    void smallRyeNamesAreAliases() {
        IncomingSettings in = channel(ChannelConfig.Direction.INCOMING, "max-outstanding-messages", "7",
                "queue.x-queue-type", "quorum", "queue.x-delivery-limit", "40", "dead-letter-exchange", "dlx1",
                "dead-letter-exchange-type", "direct", "dead-letter-queue-name", "dlq1", "dead-letter-routing-key", "dead",
                "ssl", "true", "user", "app", "network-recovery-interval", "2500", "connection-timeout", "7000").incoming();
        assertEquals(7, in.prefetch());
        assertEquals(QueueType.QUORUM, in.queueType());
        assertEquals(40, in.deliveryLimit());
        assertEquals("dlx1", in.deadLetterExchange());
        assertEquals("direct", in.deadLetterExchangeType());
        assertEquals("dlq1", in.deadLetterQueue());
        assertEquals("dead", in.deadLetterRoutingKey());
        assertTrue(in.connection().tls());
        assertEquals("app", in.connection().username());
        // SmallRye's unit for these two: a bare number is milliseconds.
        assertEquals(Duration.ofMillis(2500), in.connection().recoveryInterval());
        assertEquals(Duration.ofSeconds(7), in.connection().connectionTimeout());

        OutgoingSettings out = channel(ChannelConfig.Direction.OUTGOING, "default-routing-key", "order.placed",
                "max-inflight-messages", "64").outgoing();
        assertEquals("order.placed", out.routingKey());
        assertEquals(64, out.maxInflight());
    }

    @Test
    void aSettingGivenUnderBothNamesWithDifferentValuesNamesBoth() {
        var e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "prefetch", "5", "max-outstanding-messages", "10").incoming());
        assertEquals("mp.messaging.incoming.orders.prefetch", e.property());
        assertTrue(e.getMessage().contains("mp.messaging.incoming.orders.max-outstanding-messages"), e.getMessage());
        // The same value twice is not a conflict.
        assertEquals(5, channel(ChannelConfig.Direction.INCOMING, "prefetch", "5", "max-outstanding-messages", " 5").incoming().prefetch());
        // An error in a value given under the SmallRye name names that name.
        e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "max-outstanding-messages", "none").incoming());
        assertEquals("mp.messaging.incoming.orders.max-outstanding-messages", e.property());
    }

    /**
     * The connection's settings have connector-wide names that environment variables set (MicroProfile
     * Config maps ONCEONLY_RABBITMQ_VIRTUAL_HOST to onceonly.rabbitmq.virtual-host); channel properties
     * win over them. The password never shows in a conflict.
     */
    @Test
    void environmentVariablesSetTheConnectionAndChannelPropertiesWin() {
        var env = new EnvConfigSource(Map.of("ONCEONLY_RABBITMQ_HOST", "mq.internal", "ONCEONLY_RABBITMQ_PORT", "5673",
                "ONCEONLY_RABBITMQ_VIRTUAL_HOST", "prod", "ONCEONLY_RABBITMQ_PASSWORD", "s3cret", "ONCEONLY_RABBITMQ_PREFETCH", "99"), 300);
        ConnectionSettings c = TestChannelConfig.of(Map.of("channel-name", "orders"), env, ChannelConfig.Direction.INCOMING)
                .incoming().connection();
        assertEquals(List.of(new Address("mq.internal", 5673)), c.addresses());
        assertEquals("prod", c.virtualHost());
        assertEquals("s3cret", c.password());
        assertEquals(16, TestChannelConfig.of(Map.of("channel-name", "orders"), env, ChannelConfig.Direction.INCOMING)
                .incoming().prefetch(), "only the connection's settings have connector-wide names");

        assertEquals(List.of(new Address("broker-2", 5673)), TestChannelConfig.of(Map.of("channel-name", "orders", "host", "broker-2"),
                env, ChannelConfig.Direction.OUTGOING).outgoing().connection().addresses());

        // SmallRye's connector-wide names work too.
        assertEquals(List.of(new Address("mq.smallrye", 5672)), TestChannelConfig.of(Map.of("channel-name", "orders"),
                Map.of("rabbitmq-host", "mq.smallrye"), ChannelConfig.Direction.INCOMING).incoming().connection().addresses());
        var e = assertThrows(InvalidConfigurationException.class, () -> TestChannelConfig.of(Map.of("channel-name", "orders"),
                Map.of("onceonly.rabbitmq.password", "one-secret", "rabbitmq-password", "other-secret"),
                ChannelConfig.Direction.INCOMING).incoming());
        assertEquals("onceonly.rabbitmq.password", e.property());
        assertFalse(e.getMessage().contains("secret"), e.getMessage());
    }

    /**
     * credentials-provider-name, as in SmallRye's connector: a CDI bean by name, channel-scoped or
     * connector-wide (environment); not beside a username or password.
     */
    @Test
    void aCredentialsProviderIsFoundByNameAndExcludesPassword() {
        CredentialsProvider vault = new DefaultCredentialsProvider("app", "from-vault");
        BrokerConfig.CredentialsProviders beans = name -> name.equals("vault") ? Optional.of(vault) : Optional.empty();
        ConnectionSettings c = TestChannelConfig.of(Map.of("channel-name", "orders", "credentials-provider-name", "vault",
                "copy-signing-key", TestChannelConfig.SIGNING_KEY), new PropertiesConfigSource(Map.of(), "global", 100),
                ChannelConfig.Direction.INCOMING, beans).incoming().connection();
        assertEquals(vault, c.credentials().provider());
        assertEquals("amqp://<vault>@localhost:5672/", c.describe());
        assertEquals(vault, TestChannelConfig.of(Map.of("channel-name", "out"),
                new PropertiesConfigSource(Map.of("onceonly.rabbitmq.credentials-provider-name", "vault"), "global", 100),
                ChannelConfig.Direction.OUTGOING, beans).outgoing().connection().credentials().provider());

        var unknown = assertThrows(InvalidConfigurationException.class, () -> TestChannelConfig.of(Map.of("channel-name", "orders",
                "credentials-provider-name", "nope", "copy-signing-key", TestChannelConfig.SIGNING_KEY), new PropertiesConfigSource(Map.of(), "global", 100),
                ChannelConfig.Direction.INCOMING, beans).incoming());
        assertEquals("mp.messaging.incoming.orders.credentials-provider-name", unknown.property());
        var both = assertThrows(InvalidConfigurationException.class, () -> TestChannelConfig.of(Map.of("channel-name", "orders",
                "credentials-provider-name", "vault", "password", "s3cret", "copy-signing-key", TestChannelConfig.SIGNING_KEY),
                new PropertiesConfigSource(Map.of(), "global", 100), ChannelConfig.Direction.INCOMING, beans).incoming());
        assertEquals("mp.messaging.incoming.orders.credentials-provider-name", both.property());
        assertFalse(both.getMessage().contains("s3cret"), both.getMessage());
    }

    /**
     * Issue 46, hole 7: no signing key is derived from the broker password any more (an unsalted hash
     * of it, testable offline from any signed copy). An incoming channel without copy-signing-key does
     * not start: the error names the channel's property and the connector-wide one.
     */
    @Test
    void anIncomingChannelWithoutASigningKeyDoesNotStart() {
        var e = assertThrows(InvalidConfigurationException.class,
                () -> TestChannelConfig.withoutSigningKey(Map.of("channel-name", "orders", "password", "s3cret")).incoming());
        assertEquals("mp.messaging.incoming.orders.copy-signing-key", e.property());
        assertTrue(e.getMessage().contains("mp.messaging.connector.onceonly-rabbitmq.copy-signing-key"), e.getMessage());
        assertTrue(e.getMessage().contains("openssl rand -base64 32"), e.getMessage());
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
    }

    /**
     * A key shorter than 32 bytes (256 bits of material) stops the start, naming the property and
     * never the key; 32 bytes and more, written raw as before, are taken as they are.
     */
    @Test
    void aWeakSigningKeyIsRefusedAndNeverEchoed() {
        for (String weak : List.of("Zq7", "changeit", "a-31-byte-long-signing-key-here")) {
            var e = assertThrows(InvalidConfigurationException.class,
                    () -> channel(ChannelConfig.Direction.INCOMING, "copy-signing-key", weak).incoming(), weak);
            assertEquals("mp.messaging.incoming.orders.copy-signing-key", e.property());
            assertFalse(e.getMessage().contains(weak), e.getMessage());
            assertTrue(e.getMessage().contains("at least 32 bytes"), e.getMessage());
        }
        String strong = "a-32-byte-long-signing-key-here!";
        assertEquals(32, strong.length());
        IncomingSettings s = channel(ChannelConfig.Direction.INCOMING, "copy-signing-key", strong).incoming();
        assertFalse(s.toString().contains(strong), s.toString());
    }

    /**
     * copy-signing-previous-keys: a comma-separated list of keys, secret like copy-signing-key. An
     * empty entry (a doubled or trailing comma) stops the start, naming the property and no key.
     */
    @Test
    void previousSigningKeysMayNotHaveEmptyEntriesAndAreNeverEchoed() {
        for (String bad : List.of("old-key,,older-key", "old-key,", ", old-key", "old-key, ,older-key")) {
            var e = assertThrows(InvalidConfigurationException.class, () -> channel(ChannelConfig.Direction.INCOMING,
                    "copy-signing-key", "new-copy-signing-key-0123456789ab", "copy-signing-previous-keys", bad).incoming(), bad);
            assertEquals("mp.messaging.incoming.orders.copy-signing-previous-keys", e.property());
            assertFalse(e.getMessage().contains("old-key") || e.getMessage().contains("new-copy-signing-key"), e.getMessage());
        }
        IncomingSettings s = channel(ChannelConfig.Direction.INCOMING, "copy-signing-key", "new-copy-signing-key-0123456789ab",
                "copy-signing-previous-keys", " old-key , older-key").incoming();
        assertFalse(s.toString().contains("old-key") || s.toString().contains("new-copy-signing-key"), s.toString());
    }

    /**
     * Several broker nodes, as in SmallRye's connector: addresses replace host and port, a node
     * without a port gets the default one (TLS: 5671), and a malformed list names the property.
     */
    @Test
    void addressesNameSeveralNodesAndReplaceHostAndPort() {
        ConnectionSettings c = channel(ChannelConfig.Direction.INCOMING, "addresses", " mq1:5673, mq2 ,[::1]:5674",
                "host", "ignored", "port", "1").incoming().connection();
        assertEquals(List.of(new Address("mq1", 5673), new Address("mq2", 5672), new Address("[::1]", 5674)), c.addresses());
        assertEquals("amqp://guest@mq1:5673,mq2:5672,[::1]:5674/", c.describe());
        assertEquals(List.of(new Address("mq3", 5671)),
                channel(ChannelConfig.Direction.OUTGOING, "tls", "true", "addresses", "mq3").outgoing().connection().addresses());
        assertEquals(List.of(new Address("g1", 5672), new Address("g2", 5672)), TestChannelConfig.of(Map.of("channel-name", "orders"),
                Map.of("rabbitmq-addresses", "g1,g2"), ChannelConfig.Direction.INCOMING).incoming().connection().addresses());
        for (String bad : List.of("mq1:abc", "mq1,,mq2", "mq1:70000")) {
            var e = assertThrows(InvalidConfigurationException.class,
                    () -> channel(ChannelConfig.Direction.INCOMING, "addresses", bad).incoming(), bad);
            assertEquals("mp.messaging.incoming.orders.addresses", e.property());
        }
    }

    @Test
    void instanceIdDefaultsToHostAndPidAndIsConfigurable() {
        String byDefault = channel(ChannelConfig.Direction.INCOMING).incoming().connection().instance();
        assertTrue(byDefault.endsWith("-" + ProcessHandle.current().pid()), byDefault);
        assertEquals("orders-7f9c", channel(ChannelConfig.Direction.INCOMING, "instance-id", "orders-7f9c").incoming()
                .connection().instance());
        var e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.OUTGOING, "instance-id", "pod one").outgoing());
        assertEquals("mp.messaging.outgoing.orders.instance-id", e.property());
    }

    @Test
    void retryBackoffValues() {
        RetryBackoff b = channel(ChannelConfig.Direction.INCOMING, "retry-delay", "2s", "retry-max-delay", "10m",
                "retry-multiplier", "1.5", "retry-broker-delay-above", "30s").incoming().backoff();
        assertEquals(new RetryBackoff(Duration.ofSeconds(2), Duration.ofMinutes(10), 1.5, Duration.ofSeconds(30)), b);
        // A first delay over the default cap raises the cap with it, rather than failing a configuration that worked.
        assertEquals(Duration.ofMinutes(3), channel(ChannelConfig.Direction.INCOMING, "retry-delay", "3m").incoming().backoff().max());
        assertEquals(1.0, channel(ChannelConfig.Direction.INCOMING, "retry-multiplier", "1").incoming().backoff().multiplier());
    }

    @Test
    void invalidRetryBackoffNamesTheProperty() {
        for (String bad : new String[] {"abc", "0.5", "NaN", "11", "Infinity"}) {
            assertIncomingInvalid("retry-multiplier", "retry-multiplier", bad);
        }
        var e = assertIncomingInvalid("retry-max-delay", "retry-delay", "5s", "retry-max-delay", "2s");
        assertTrue(e.getMessage().contains("retry-delay (5s)"), e.getMessage());
        assertIncomingInvalid("retry-max-delay", "retry-max-delay", "2d");
        assertIncomingInvalid("retry-delay", "retry-delay", "25h");
        assertIncomingInvalid("retry-broker-delay-above", "retry-broker-delay-above", "500ms");
        // The delay queues' names (<queue>.onceonly.delay.<ms>) must fit RabbitMQ's 255 characters.
        String longQueue = "q".repeat(240);
        assertIncomingInvalid("queue.name", "queue.name", longQueue);
        // Unless no delay is long enough to be held by the broker.
        assertEquals(longQueue, channel(ChannelConfig.Direction.INCOMING, "queue.name", longQueue,
                "retry-broker-delay-above", "1m").incoming().queue());
    }

    /** The incoming channel with these settings fails to start, naming {@code key}. */
    private static InvalidConfigurationException assertIncomingInvalid(String key, String... keyValues) {
        var e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, keyValues).incoming(), String.join(" ", keyValues));
        assertEquals("mp.messaging.incoming.orders." + key, e.property());
        return e;
    }

    @Test
    void invalidValuesNameTheProperty() {
        var e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "prefetch", "0").incoming());
        assertEquals("mp.messaging.incoming.orders.prefetch", e.property());
        e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "retry-delay", "soon").incoming());
        assertEquals("mp.messaging.incoming.orders.retry-delay", e.property());
        e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "queue.type", "stream").incoming());
        assertTrue(e.getMessage().contains("classic, quorum"), e.getMessage());
        e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.OUTGOING, "exchange.name", "bad name").outgoing());
        assertEquals("mp.messaging.outgoing.orders.exchange.name", e.property());
        // A dead-letter exchange equal to the source exchange would route dead letters back forever.
        e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "exchange.name", "orders", "dead-letter.exchange", "orders").incoming());
        assertEquals("mp.messaging.incoming.orders.dead-letter.exchange", e.property());
        e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "port", "70000", "password", "s3cret").incoming());
        assertFalse(e.getMessage().contains("s3cret"));
    }

    @Test
    void queueArgumentsAreReadUnderOwnAndSmallRyeNames() {
        assertEquals(QueueArguments.NONE, channel(ChannelConfig.Direction.INCOMING).incoming().queueArguments());
        QueueArguments a = channel(ChannelConfig.Direction.INCOMING, "queue.single-active-consumer", "true",
                "queue.message-ttl", "30s", "queue.max-length", "1000", "queue.overflow", "Reject-Publish").incoming().queueArguments();
        assertEquals(new QueueArguments(true, Duration.ofSeconds(30), 1000, "reject-publish"), a);
        assertEquals(Map.of("x-single-active-consumer", true, "x-message-ttl", 30_000L, "x-max-length", 1000,
                "x-overflow", "reject-publish"), a.asMap());
        // SmallRye's queue.ttl is a bare number of milliseconds.
        assertEquals(Duration.ofMillis(1500), channel(ChannelConfig.Direction.INCOMING, "queue.ttl", "1500").incoming()
                .queueArguments().messageTtl());
        var e = assertThrows(InvalidConfigurationException.class,
                () -> channel(ChannelConfig.Direction.INCOMING, "queue.ttl", "1500", "queue.message-ttl", "2s").incoming());
        assertEquals("mp.messaging.incoming.orders.queue.message-ttl", e.property());
    }

    /** A value the broker would refuse stops the start naming the property, instead of failing every declaration. */
    @Test
    void invalidQueueArgumentsNameTheProperty() {
        Map<String[], String> bad = new java.util.LinkedHashMap<>();
        bad.put(new String[] {"queue.single-active-consumer", "yes"}, "queue.single-active-consumer");
        bad.put(new String[] {"queue.message-ttl", "soon"}, "queue.message-ttl");
        bad.put(new String[] {"queue.message-ttl", "60d"}, "queue.message-ttl");
        bad.put(new String[] {"queue.message-ttl", "500us"}, "queue.message-ttl");
        bad.put(new String[] {"queue.ttl", "-5"}, "queue.ttl");
        bad.put(new String[] {"queue.max-length", "0"}, "queue.max-length");
        bad.put(new String[] {"queue.max-length", "many"}, "queue.max-length");
        bad.put(new String[] {"queue.max-length", "10", "queue.overflow", "drop-tail"}, "queue.overflow");
        // An overflow behaviour without the limit it applies to.
        bad.put(new String[] {"queue.overflow", "reject-publish"}, "queue.overflow");
        // Quorum queues do not support reject-publish-dlx (RabbitMQ refuses the declaration).
        bad.put(new String[] {"queue.type", "quorum", "queue.max-length", "10", "queue.overflow", "reject-publish-dlx"}, "queue.overflow");
        bad.put(new String[] {"queue.x-queue-type", "quorum", "queue.max-length", "10", "queue.overflow", "reject-publish-dlx"},
                "queue.overflow");
        for (var c : bad.entrySet()) {
            var e = assertThrows(InvalidConfigurationException.class,
                    () -> channel(ChannelConfig.Direction.INCOMING, c.getKey()).incoming(), List.of(c.getKey()).toString());
            assertEquals("mp.messaging.incoming.orders." + c.getValue(), e.property(), List.of(c.getKey()).toString());
        }
        var e = assertThrows(InvalidConfigurationException.class, () -> channel(ChannelConfig.Direction.INCOMING,
                "queue.type", "quorum", "queue.max-length", "10", "queue.overflow", "reject-publish-dlx").incoming());
        assertTrue(e.getMessage().contains("quorum queues do not support reject-publish-dlx"), e.getMessage());
        // Classic queues do support it.
        assertEquals("reject-publish-dlx", channel(ChannelConfig.Direction.INCOMING, "queue.max-length", "10",
                "queue.overflow", "reject-publish-dlx").incoming().queueArguments().overflow());
    }

    @Test
    void concurrencyCopiesShareTheQueueAndTheConfiguredNames() {
        ChannelConfig copy = channelNamed("orders$2", "prefetch", "x");
        var e = assertThrows(InvalidConfigurationException.class, copy::incoming);
        assertEquals("mp.messaging.incoming.orders.prefetch", e.property());
        IncomingSettings s = channelNamed("orders$2").incoming();
        assertEquals("orders$2", s.channel());
        assertEquals("orders", s.queue());
        assertEquals("orders.dlq", s.deadLetterQueue());
    }

    @Test
    void outgoingDefaults() {
        OutgoingSettings s = channel(ChannelConfig.Direction.OUTGOING).outgoing();
        assertEquals("", s.exchange());
        assertEquals("orders", s.routingKey());
        assertTrue(s.persistent());
        assertEquals(256, s.maxInflight());
        assertEquals(Duration.ofSeconds(10), s.confirmTimeout());
    }
}
