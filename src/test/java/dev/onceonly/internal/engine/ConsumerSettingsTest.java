package dev.onceonly.internal.engine;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The engine trusts its settings, so the record itself refuses the combinations the engine cannot
 * act on; and the startup log line says which key and comparison a consumer uses.
 */
class ConsumerSettingsTest {

    private final ConsumerSettings content = Settings.defaults("orders", KeyStrategy.CONTENT);

    @Test
    void anUnresolvedStrategyOrPolicyIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Settings.withKey(content, KeyStrategy.DEFAULT, false));
        assertThrows(IllegalArgumentException.class, () -> Settings.withConflict(content, ConflictPolicy.DEFAULT));
    }

    @Test
    void headerAndPointerKeysNeedAPartAndTheOthersDoNot() {
        assertThrows(IllegalArgumentException.class, () -> Settings.withKey(content, KeyStrategy.HEADER, false));
        assertThrows(IllegalArgumentException.class, () -> Settings.withKey(content, KeyStrategy.JSON_POINTER, false));
        assertDoesNotThrow(() -> Settings.withKey(content, KeyStrategy.HEADER, false, "order-id"));
        assertDoesNotThrow(() -> Settings.withKey(content, KeyStrategy.JSON_POINTER, false, "/orderId"));
        for (KeyStrategy s : new KeyStrategy[] {KeyStrategy.CONTENT, KeyStrategy.MESSAGE_ID, KeyStrategy.PARAMETER}) {
            assertDoesNotThrow(() -> Settings.withKey(content, s, false), s.name());
        }
    }

    @Test
    void conflictFieldsComeOnlyWithStrictConflicts() {
        ConsumerSettings byId = Settings.withKey(content, KeyStrategy.MESSAGE_ID, false);
        assertThrows(IllegalArgumentException.class, () -> Settings.withConflict(byId, ConflictPolicy.IGNORE, "/sku"));
        assertDoesNotThrow(() -> Settings.withConflict(byId, ConflictPolicy.IGNORE));
        assertDoesNotThrow(() -> Settings.withConflict(byId, ConflictPolicy.STRICT, "/sku"));
    }

    @Test
    void theStartupLineNamesTheKeyItsFallbackAndWhatIsCompared() {
        assertEquals("content", content.describeKey());
        assertEquals("message-id", Settings.withKey(content, KeyStrategy.MESSAGE_ID, false).describeKey());
        assertEquals("message-id|content", Settings.withKey(content, KeyStrategy.MESSAGE_ID, true).describeKey());
        ConsumerSettings header = Settings.withKey(content, KeyStrategy.HEADER, true, "order-id");
        assertEquals("header(order-id)|content", header.describeKey());
        assertEquals("header(order-id)|content, conflict=ignore",
                Settings.withConflict(header, ConflictPolicy.IGNORE).describeKey());
        assertEquals("json-pointer(/tenant,/orderId), conflict-fields=/sku,/quantity",
                Settings.withConflict(Settings.withKey(content, KeyStrategy.JSON_POINTER, false, "/tenant", "/orderId"),
                        ConflictPolicy.STRICT, "/sku", "/quantity").describeKey());
    }
}
