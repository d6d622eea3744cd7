package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Replayable;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.result.ResultSettings;
import dev.onceonly.testing.Settings;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Who keeps results, and how: the {@code result.*} properties, read per consumer, with errors naming the property. */
class ResultConfigTest {

    /** Methods of every shape a guarded method may have here. */
    static class Methods {
        public Replayable<String> replayable() {
            return Replayable.of("r");
        }

        public String plain() {
            return "p";
        }

        public void nothing() {
        }
    }

    private static ResultSettings results(Map<String, String> props, String method) throws NoSuchMethodException {
        ConsumerConfig consumers = new ConsumerConfig(new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(props, "test", 500)).build());
        ConsumerSettings consumer = Settings.defaults("c", KeyStrategy.CONTENT);
        return new ResultConfig(consumers).results(Methods.class.getMethod(method), consumer);
    }

    @Test
    void aReplayableMethodKeepsItsResultsUnlessToldNot() throws Exception {
        assertEquals(new ResultSettings(65_536, ConsumerSettings.DEFAULT_RETENTION), results(Map.of(), "replayable"));
        assertNull(results(Map.of("onceonly.consumers.c.result.keep", "false"), "replayable"));
    }

    @Test
    void aPlainMethodKeepsItsResultsWhenToldTo() throws Exception {
        assertNull(results(Map.of(), "plain"));
        assertEquals(new ResultSettings(1_000, Duration.ofMinutes(5)), results(Map.of("onceonly.consumers.c.result.keep", "true",
                "onceonly.consumers.c.result.max-size", "1000", "onceonly.result.retention", "5m"), "plain"));
    }

    /** A method that returns nothing has nothing to keep: its own property says so at startup; the global one passes it by. */
    @Test
    void aMethodReturningNothingCannotKeepAResult() throws Exception {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> results(Map.of("onceonly.consumers.c.result.keep", "true"), "nothing"));
        assertEquals("onceonly.consumers.c.result.keep", e.property());
        assertNull(results(Map.of("onceonly.result.keep", "true"), "nothing"));
        assertEquals(new ResultSettings(65_536, ConsumerSettings.DEFAULT_RETENTION), results(Map.of("onceonly.result.keep", "true"), "plain"));
    }

    @Test
    void badValuesNameTheirProperty() {
        assertEquals("onceonly.consumers.c.result.max-size", assertThrows(InvalidConfigurationException.class,
                () -> results(Map.of("onceonly.consumers.c.result.max-size", "0"), "replayable")).property());
        assertEquals("onceonly.result.max-size", assertThrows(InvalidConfigurationException.class,
                () -> results(Map.of("onceonly.result.max-size", "16777217"), "replayable")).property());
        assertEquals("onceonly.consumers.c.result.retention", assertThrows(InvalidConfigurationException.class,
                () -> results(Map.of("onceonly.consumers.c.result.retention", "soon"), "replayable")).property());
        assertEquals("onceonly.consumers.c.result.keep", assertThrows(InvalidConfigurationException.class,
                () -> results(Map.of("onceonly.consumers.c.result.keep", "maybe"), "plain")).property());
    }
}
