package dev.onceonly.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KeyDeriverTest {

    private final KeyDeriver keys = new KeyDeriver("oo:");
    private final ConsumerSettings content = Settings.defaults("orders", KeyStrategy.CONTENT);

    private static MessageView msg(String exchange, String routingKey, String body) {
        return MessageView.of(exchange, routingKey, null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    private static MessageView msg(String messageId, Map<String, Object> headers, String body) {
        return MessageView.of("ex", "rk", messageId, headers, body.getBytes(StandardCharsets.UTF_8));
    }

    private ConsumerSettings settings(KeyStrategy strategy, String header, String pointer, boolean fallback) {
        return Settings.withKey(content, strategy, header, pointer, fallback);
    }

    /**
     * Header keys are byte-exact and zone-free: two different invalid-UTF-8 values were one key
     * (both decoded to U+FFFD), and a Date's key changed with the JVM's time zone.
     */
    @Test
    void headerKeysAreByteExactAndIndependentOfTheTimeZone() {
        ConsumerSettings byHeader = settings(KeyStrategy.HEADER, "k", "", false);
        MessageKey a = keys.derive(byHeader, msg(null, Map.of("k", new byte[] {(byte) 0xff, 1}), "{}"), null);
        MessageKey b = keys.derive(byHeader, msg(null, Map.of("k", new byte[] {(byte) 0xfe, 1}), "{}"), null);
        assertNotEquals(a.storeKey(), b.storeKey(), "different bytes, different keys");
        MessageKey text = keys.derive(byHeader, msg(null, Map.of("k", "order-1".getBytes(java.nio.charset.StandardCharsets.UTF_8)), "{}"), null);
        assertEquals(keys.derive(byHeader, msg(null, Map.of("k", "order-1"), "{}"), null).storeKey(), text.storeKey(),
                "valid UTF-8 bytes key like the same text");

        java.util.Date when = new java.util.Date(1_700_000_000_000L);
        java.util.TimeZone before = java.util.TimeZone.getDefault();
        try {
            java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("UTC"));
            MessageKey utc = keys.derive(byHeader, msg(null, Map.of("k", when), "{}"), null);
            java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("Asia/Tokyo"));
            MessageKey tokyo = keys.derive(byHeader, msg(null, Map.of("k", when), "{}"), null);
            assertEquals(utc.storeKey(), tokyo.storeKey());
        } finally {
            java.util.TimeZone.setDefault(before);
        }
    }

    @Test
    void contentKeyIsStableAndScopedByConsumer() {
        MessageKey a = keys.derive(content, msg("orders", "order.placed", "{}"), null);
        MessageKey b = keys.derive(content, msg("orders", "order.placed", "{}"), null);
        MessageKey other = keys.derive(Settings.defaults("billing", KeyStrategy.CONTENT), msg("orders", "order.placed", "{}"), null);
        assertEquals(a.storeKey(), b.storeKey());
        assertTrue(a.storeKey().startsWith("oo:orders:"), a.storeKey());
        assertEquals("oo:orders:".length() + 22, a.storeKey().length(), "fixed-size digest");
        assertNotEquals(a.storeKey(), other.storeKey(), "two consumers of one fan-out message each get their own key");
        assertEquals("", a.fingerprint(), "content keys already are the body hash");
    }

    @Test
    void exchangeAndRoutingKeyCannotBeShiftedToForgeAKey() {
        String k1 = keys.derive(content, msg("a:b", "c", "x"), null).storeKey();
        String k2 = keys.derive(content, msg("a", "b:c", "x"), null).storeKey();
        String k3 = keys.derive(content, msg("a%3Ab", "c", "x"), null).storeKey();
        String k4 = keys.derive(content, msg("a", "b%3Ac", "x"), null).storeKey();
        assertEquals(4, java.util.Set.of(k1, k2, k3, k4).size(), "all four differ");
    }

    @Test
    void differentBodyOrRoutingGivesDifferentContentKeys() {
        String base = keys.derive(content, msg("ex", "rk", "a"), null).storeKey();
        assertNotEquals(base, keys.derive(content, msg("ex", "rk", "b"), null).storeKey());
        assertNotEquals(base, keys.derive(content, msg("ex", "rk2", "a"), null).storeKey());
    }

    @Test
    void keysNeverChangeAcrossVersions() {
        // Retained claims and ledger rows hold these keys: a different derivation would let every
        // message processed before an upgrade through once more after it.
        assertEquals("oo:orders:vngNUFSo545b9YHQdsBkFQ", keys.derive(content, msg("orders", "order.placed", "{}"), null).storeKey());
        assertEquals("oo:orders:F68uC5bn4TqonTBlFlh0MQ", keys.derive(content, msg("bö:rse%", "rk:ü", "x"), null).storeKey());
        MessageKey byId = keys.derive(settings(KeyStrategy.MESSAGE_ID, "", "", false), msg("id-1", Map.of(), "one"), null);
        assertEquals("oo:orders:lkFLJk6JM5RaFBarr28jdw", byId.storeKey());
        assertEquals("dpLDrTVAu4A8", byId.fingerprint());
    }

    @Test
    void overlongExchangeOrRoutingKeyIsRejectedNotTruncated() {
        String longName = "e".repeat(256);
        KeyRejectedException e = assertThrows(KeyRejectedException.class,
                () -> keys.derive(content, msg(longName, "rk", "x"), null));
        assertTrue(e.getMessage().contains("exchange"), e.getMessage());
        assertThrows(KeyRejectedException.class, () -> keys.derive(content, msg("ex", longName, "x"), null));
    }

    @Test
    void messageIdStrategyUsesTheIdAndRejectsAMissingOne() {
        ConsumerSettings s = settings(KeyStrategy.MESSAGE_ID, "", "", false);
        MessageKey a = keys.derive(s, msg("id-1", Map.of(), "one"), null);
        MessageKey b = keys.derive(s, msg("id-1", Map.of(), "two"), null);
        assertEquals(a.storeKey(), b.storeKey(), "same id, same key");
        assertNotEquals(a.fingerprint(), b.fingerprint(), "different bodies keep different fingerprints (CONFLICT)");
        KeyRejectedException e = assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "x"), null));
        assertTrue(e.getMessage().contains("message-id"), e.getMessage());
        assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg("  ", Map.of(), "x"), null));
    }

    @Test
    void missingIdFallsBackToContentWhenConfigured() {
        ConsumerSettings s = settings(KeyStrategy.MESSAGE_ID, "", "", true);
        MessageKey fallback = keys.derive(s, msg(null, Map.of(), "x"), null);
        assertEquals(keys.derive(content, msg(null, Map.of(), "x"), null).storeKey(), fallback.storeKey());
    }

    @Test
    void strategiesAreTaggedSoTheSameTextNeverCollidesAcrossThem() {
        MessageView m = msg("x", Map.of("k", "x"), "{\"id\":\"x\"}");
        String byId = keys.derive(settings(KeyStrategy.MESSAGE_ID, "", "", false), m, null).storeKey();
        String byHeader = keys.derive(settings(KeyStrategy.HEADER, "k", "", false), m, null).storeKey();
        String byPointer = keys.derive(settings(KeyStrategy.JSON_POINTER, "", "/id", false), m, null).storeKey();
        String byParam = keys.derive(settings(KeyStrategy.PARAMETER, "", "", false), m, "x").storeKey();
        assertEquals(4, java.util.Set.of(byId, byHeader, byPointer, byParam).size());
    }

    @Test
    void headerStrategyReadsTextAndBytesAndRejectsAMissingHeader() {
        ConsumerSettings s = settings(KeyStrategy.HEADER, "x-idempotency-key", "", false);
        String text = keys.derive(s, msg(null, Map.of("x-idempotency-key", "abc"), "1"), null).storeKey();
        String bytes = keys.derive(s, msg(null, Map.of("x-idempotency-key", "abc".getBytes(StandardCharsets.UTF_8)), "1"), null).storeKey();
        assertEquals(text, bytes);
        KeyRejectedException e = assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "1"), null));
        assertTrue(e.getMessage().contains("x-idempotency-key"), e.getMessage());
    }

    @Test
    void jsonPointerReadsStringsAndNumbers() {
        ConsumerSettings s = settings(KeyStrategy.JSON_POINTER, "", "/order/id", false);
        String str = keys.derive(s, msg(null, Map.of(), "{\"order\":{\"id\":\"42\"}}"), null).storeKey();
        String num = keys.derive(s, msg(null, Map.of(), "{\"order\":{\"id\":42,\"qty\":1}}"), null).storeKey();
        assertEquals(str, num, "the key is the text of the value");
    }

    @Test
    void jsonPointerRejectsInvalidJsonMissingValuesAndNonScalars() {
        ConsumerSettings s = settings(KeyStrategy.JSON_POINTER, "", "/orderId", false);
        KeyRejectedException invalid = assertThrows(KeyRejectedException.class,
                () -> keys.derive(s, msg(null, Map.of(), "{\"orderId\": "), null));
        assertTrue(invalid.getMessage().contains("not valid JSON"), invalid.getMessage());
        KeyRejectedException missing = assertThrows(KeyRejectedException.class,
                () -> keys.derive(s, msg(null, Map.of(), "{\"other\":1}"), null));
        assertTrue(missing.getMessage().contains("/orderId"), missing.getMessage());
        assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "{\"orderId\":null}"), null));
        KeyRejectedException object = assertThrows(KeyRejectedException.class,
                () -> keys.derive(s, msg(null, Map.of(), "{\"orderId\":{\"a\":1}}"), null));
        assertTrue(object.getMessage().contains("OBJECT"), object.getMessage());
        assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "\"just a string\""), null));
    }

    @Test
    void rejectionReasonsNeverQuoteTheBody() {
        ConsumerSettings s = settings(KeyStrategy.JSON_POINTER, "", "/orderId", false);
        String secretBody = "{\"card\":\"4111111111111111\"";
        KeyRejectedException e = assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), secretBody), null));
        assertTrue(!e.getMessage().contains("4111"), e.getMessage());
    }

    @Test
    void parameterStrategyRejectsNullOrBlankAndOverlongKeys() {
        ConsumerSettings s = settings(KeyStrategy.PARAMETER, "", "", false);
        assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "x"), null));
        assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "x"), " "));
        assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "x"), "k".repeat(1025)));
        assertEquals(keys.derive(s, msg(null, Map.of(), "x"), 7L).storeKey(), keys.derive(s, msg(null, Map.of(), "y"), "7").storeKey());
    }

    @Test
    void invalidPointerSyntaxIsAnIllegalArgument() {
        assertThrows(IllegalArgumentException.class, () -> keys.validatePointer("orderId"));
        keys.validatePointer("/orderId");
    }
}
