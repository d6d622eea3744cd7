package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Address;
import dev.onceonly.api.InvalidConfigurationException;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.eclipse.microprofile.config.Config;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One set of broker settings reaches every connection the connector opens, the outbox relay's as
 * the channels', under {@code onceonly.rabbitmq.*} and {@code mp.messaging.connector.onceonly-rabbitmq.*}
 * alike; the two names set to different values stop the start, naming both.
 */
class BrokerConfigTest {

    private static final String MP = "mp.messaging.connector.onceonly-rabbitmq.";

    private static Config config(Map<String, String> props) {
        return new SmallRyeConfigBuilder().withSources(new PropertiesConfigSource(props, "test", 100)).build();
    }

    private static ConnectionSettings outbox(Map<String, String> global) {
        return BrokerConfig.connectorWide(config(global), BrokerConfig.CredentialsProviders.NONE);
    }

    private static ConnectionSettings incoming(Map<String, String> channel, Map<String, String> global) {
        Map<String, String> scoped = new HashMap<>(channel);
        scoped.put("channel-name", "orders");
        return TestChannelConfig.of(scoped, global, ChannelConfig.Direction.INCOMING).incoming().connection();
    }

    private static ConnectionSettings outgoing(Map<String, String> global) {
        return TestChannelConfig.of(Map.of("channel-name", "out"), global, ChannelConfig.Direction.OUTGOING).outgoing().connection();
    }

    @Test
    void theOutboxTakesTheConnectorWideSettingsUnderEitherName() {
        Map<String, String> mp = Map.of(MP + "host", "mq.mp", MP + "port", "5673", MP + "username", "app",
                MP + "virtual-host", "orders", MP + "instance-id", "pod-1");
        ConnectionSettings fromMp = outbox(mp);
        assertEquals(List.of(new Address("mq.mp", 5673)), fromMp.addresses());
        assertEquals("app", fromMp.username());
        assertEquals("orders", fromMp.virtualHost());

        ConnectionSettings fromOwn = outbox(Map.of("onceonly.rabbitmq.host", "mq.own", "onceonly.rabbitmq.username", "app"));
        assertEquals(List.of(new Address("mq.own", 5672)), fromOwn.addresses());
        assertEquals("app", fromOwn.username());
        // SmallRye's connector-wide alias of the MicroProfile name too.
        assertTrue(outbox(Map.of(MP + "ssl", "true")).tls());
    }

    /** The channels and the outbox, given one configuration, connect to the same broker the same way. */
    @Test
    void channelsAndTheOutboxGetTheSameSettings() {
        Map<String, String> global = Map.of(MP + "addresses", "mq1:5673,mq2", "onceonly.rabbitmq.virtual-host", "shop",
                "onceonly.rabbitmq.username", "app", MP + "password", "s3cret", MP + "instance-id", "pod-1");
        ConnectionSettings relay = outbox(global);
        for (ConnectionSettings channel : List.of(incoming(Map.of(), global), outgoing(global))) {
            assertEquals(relay.addresses(), channel.addresses());
            assertEquals(relay.virtualHost(), channel.virtualHost());
            assertEquals(relay.username(), channel.username());
            assertEquals(relay.password(), channel.password());
            assertEquals(relay.instance(), channel.instance());
        }
        assertEquals(List.of(new Address("mq1", 5673), new Address("mq2", 5672)), relay.addresses());
        // A channel's own setting still wins for that channel.
        assertEquals(List.of(new Address("mq3", 5672)), incoming(Map.of("host", "mq3"), Map.of(MP + "host", "mq.mp")).addresses());
    }

    @Test
    void bothNamesAgreeingIsFine() {
        Map<String, String> global = Map.of(MP + "host", "mq", "onceonly.rabbitmq.host", " mq ");
        assertEquals(List.of(new Address("mq", 5672)), outbox(global).addresses());
        assertEquals(List.of(new Address("mq", 5672)), incoming(Map.of(), global).addresses());
    }

    @Test
    void bothNamesDisagreeingStopsEveryConnectionNamingBoth() {
        Map<String, String> global = Map.of(MP + "host", "mq-a", "onceonly.rabbitmq.host", "mq-b");
        List<InvalidConfigurationException> errors = List.of(
                assertThrows(InvalidConfigurationException.class, () -> outbox(global)),
                assertThrows(InvalidConfigurationException.class, () -> incoming(Map.of(), global)),
                // Also where the channel sets the host itself: the connector-wide settings are wrong for every other connection.
                assertThrows(InvalidConfigurationException.class, () -> incoming(Map.of("host", "mq-c"), global)),
                assertThrows(InvalidConfigurationException.class, () -> outgoing(global)));
        for (InvalidConfigurationException e : errors) {
            assertEquals("onceonly.rabbitmq.host", e.property());
            assertTrue(e.getMessage().contains(MP + "host"), e.getMessage());
        }
    }

    @Test
    void aDisagreeingPasswordIsNeverShown() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> outbox(Map.of(MP + "password", "first-secret", "onceonly.rabbitmq.password", "second-secret")));
        assertEquals("onceonly.rabbitmq.password", e.property());
        assertTrue(e.getMessage().contains(MP + "password"), e.getMessage());
        assertFalse(e.getMessage().contains("secret"), e.getMessage());
    }

    @Test
    void anInvalidConnectorWideValueNamesThePropertyItCameFrom() {
        assertEquals(MP + "port", assertThrows(InvalidConfigurationException.class,
                () -> outbox(Map.of(MP + "port", "70000"))).property());
        assertEquals("onceonly.rabbitmq.port", assertThrows(InvalidConfigurationException.class,
                () -> outbox(Map.of("onceonly.rabbitmq.port", "none"))).property());
    }
}
