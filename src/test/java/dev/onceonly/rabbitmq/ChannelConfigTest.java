package dev.onceonly.rabbitmq;

import dev.onceonly.api.InvalidConfigurationException;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.eclipse.microprofile.config.Config;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
        Config config = new SmallRyeConfigBuilder().withSources(new PropertiesConfigSource(props, "test", 100)).build();
        return new ChannelConfig(config, direction);
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
        assertEquals(5671, s.connection().port(), "TLS changes the default port");
        assertEquals("amqps://app@mq:5671/prod", s.connection().describe());
        assertFalse(s.connection().toString().contains("s3cret"));
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
