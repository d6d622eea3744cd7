package dev.onceonly.internal.engine;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When a copy under the same key is the same message (DUPLICATE) or another one (CONFLICT). */
class MessageKeyTest {

    private static MessageKey key(String fingerprint) {
        return new MessageKey("oo:orders:d", "d", fingerprint, null);
    }

    @Test
    void onlyTwoNonEmptyFingerprintsThatDifferAreAConflict() {
        assertTrue(key("abc").matches("abc"));
        assertFalse(key("abc").matches("abd"));
        assertTrue(key("").matches("abd"), "this key's bodies are not compared");
        assertTrue(key("abc").matches(""), "the stored copy was written without comparison");
    }

    @Test
    void theComparedHashIsLowerCaseHexOrEmpty() {
        assertEquals("", key("").comparedHashHex());
        assertEquals("00ff1a", new MessageKey("k", "d", "", new byte[] {0, (byte) 0xff, 0x1a}).comparedHashHex());
    }
}
