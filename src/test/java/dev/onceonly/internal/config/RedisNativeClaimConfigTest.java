package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.redis.RedisSettings;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code onceonly.redis.native-claim}: {@code auto} by default, {@code off} read, anything else refused naming the
 * property, and {@code auto} refused with {@code onceonly.fencing=true}.
 */
class RedisNativeClaimConfigTest {

    private static RedisSettings redis(Map<String, String> props) {
        return RedisWaitConfigTest.redis(props);
    }

    @Test
    void autoByDefaultAndOffWhenConfigured() {
        RedisSettings auto = redis(Map.of());
        assertEquals(RedisSettings.NativeClaim.AUTO, auto.nativeClaim());
        assertFalse(auto.describe().contains("native-claim"), auto.describe());
        RedisSettings off = redis(Map.of("onceonly.redis.native-claim", "OFF"));
        assertEquals(RedisSettings.NativeClaim.OFF, off.nativeClaim());
        assertTrue(off.describe().contains("native-claim=off"), off.describe());
        assertEquals(RedisSettings.NativeClaim.OFF, off.withWait(1, java.time.Duration.ofMillis(50)).nativeClaim(), "kept by withWait");
        assertEquals(RedisSettings.NativeClaim.AUTO, off.withNativeClaim(RedisSettings.NativeClaim.AUTO).nativeClaim());
    }

    /** The native claim gives no fence: an application that relies on fences must not start with it. */
    @Test
    void fencingWithTheNativeClaimStopsStartupNamingTheProperty() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> redis(Map.of("onceonly.fencing", "true")));
        assertEquals("onceonly.redis.native-claim", e.property());
        assertTrue(e.getMessage().contains("onceonly.fencing"), e.getMessage());
        assertEquals(RedisSettings.NativeClaim.OFF,
                redis(Map.of("onceonly.fencing", "true", "onceonly.redis.native-claim", "off")).nativeClaim());
        assertEquals(RedisSettings.NativeClaim.AUTO, redis(Map.of("onceonly.fencing", "false")).nativeClaim());
    }

    @Test
    void anUnknownValueStopsStartupNamingTheProperty() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> redis(Map.of("onceonly.redis.native-claim", "sometimes")));
        assertEquals("onceonly.redis.native-claim", e.property());
    }
}
