package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.redis.RedisConfig;
import dev.onceonly.internal.redis.RedisSettings;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code onceonly.redis.wait-replicas} and {@code wait-timeout}: defaults, and refusals naming the property. */
class RedisWaitConfigTest {

    /** The Redis settings read from {@code props} alone. */
    static RedisSettings redis(Map<String, String> props) {
        return RedisConfig.read(ConfigReader.of(new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(props, "test", 500)).build()));
    }

    @Test
    void offByDefault() {
        RedisSettings r = redis(Map.of());
        assertEquals(0, r.waitReplicas());
        assertEquals(Duration.ofMillis(100), r.waitTimeout());
    }

    @Test
    void readAsConfigured() {
        RedisSettings r = redis(Map.of("onceonly.redis.wait-replicas", "2", "onceonly.redis.wait-timeout", "250ms"));
        assertEquals(2, r.waitReplicas());
        assertEquals(Duration.ofMillis(250), r.waitTimeout());
        assertTrue(r.describe().contains("wait=2/250ms"), r.describe());
    }

    @Test
    void aNegativeCountStopsStartupNamingTheProperty() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> redis(Map.of("onceonly.redis.wait-replicas", "-1")));
        assertEquals("onceonly.redis.wait-replicas", e.property());
    }

    @Test
    void aWaitAsLongAsTheSocketTimeoutStopsStartup() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> redis(Map.of("onceonly.redis.wait-replicas", "1", "onceonly.redis.wait-timeout", "2s",
                        "onceonly.redis.socket-timeout", "2s")));
        assertEquals("onceonly.redis.wait-timeout", e.property());
        // Without WAIT the timeout is not used, and not checked.
        assertEquals(0, redis(Map.of("onceonly.redis.wait-timeout", "5s")).waitReplicas());
        // Settings built in code are held to the same rule.
        RedisSettings plain = redis(Map.of("onceonly.redis.socket-timeout", "500ms"));
        assertThrows(IllegalArgumentException.class, () -> plain.withWait(1, Duration.ofMillis(500)));
        assertThrows(IllegalArgumentException.class, () -> plain.withWait(-1, Duration.ofMillis(100)));
        assertEquals(1, plain.withWait(1, Duration.ofMillis(499)).waitReplicas());
    }

    @Test
    void aBadTimeoutStopsStartupNamingTheProperty() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> redis(Map.of("onceonly.redis.wait-timeout", "soon")));
        assertEquals("onceonly.redis.wait-timeout", e.property());
    }
}
