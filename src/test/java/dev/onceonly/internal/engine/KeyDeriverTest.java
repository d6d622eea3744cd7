package dev.onceonly.internal.engine;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    private ConsumerSettings settings(KeyStrategy strategy, boolean fallback, String... parts) {
        return Settings.withKey(content, strategy, fallback, parts);
    }

    /**
     * Header keys are byte-exact and zone-free: two different invalid-UTF-8 values were one key
     * (both decoded to U+FFFD), and a Date's key changed with the JVM's time zone.
     */
    @Test
    void headerKeysAreByteExactAndIndependentOfTheTimeZone() {
        ConsumerSettings byHeader = settings(KeyStrategy.HEADER, false, "k");
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

    /** Nested {@code depth} levels deep, around an order id: {"a":{"a":...{"orderId":"o-1"}...}}. */
    private static String nested(int depth) {
        return "{\"a\":".repeat(depth) + "{\"orderId\":\"o-1\"}" + "}".repeat(depth);
    }

    /**
     * Issue 46, hole 10: a body nested deeper than the JSON parser allows (Parsson throws a plain
     * RuntimeException past 1,000 levels, not a JsonException) escaped key derivation, and the
     * message was retried as a handler failure to its last attempt. It depends on the bytes only:
     * refused, with a reason that quotes nothing of the body, for a pointer key and for conflict fields.
     */
    @Test
    void aBodyNestedTooDeeplyForTheParserIsRefused() {
        MessageView deep = msg("order-1", Map.of(), nested(5_000));
        for (ConsumerSettings s : List.of(settings(KeyStrategy.JSON_POINTER, false, "/orderId"),
                Settings.withConflict(settings(KeyStrategy.MESSAGE_ID, false), ConflictPolicy.STRICT, "/orderId"))) {
            KeyRejectedException e = assertThrows(KeyRejectedException.class, () -> keys.derive(s, deep, null), s.keyStrategy().name());
            assertTrue(e.getMessage().contains("payload is not valid JSON"), e.getMessage());
            assertFalse(e.getMessage().contains("{"), e.getMessage());
        }
    }

    /**
     * A JSON-P provider without a depth limit (here Parsson with its limit lifted) recurses on such a
     * body until the stack overflows: refused the same way, the thread's stack unwound.
     */
    @Test
    void aParserThatRecursesOutOfStackOnADeepBodyIsRefused() {
        String before = System.getProperty("org.eclipse.parsson.maxDepth");
        System.setProperty("org.eclipse.parsson.maxDepth", Integer.toString(Integer.MAX_VALUE));
        try {
            KeyDeriver unlimited = new KeyDeriver("oo:"); // its parser is made now, reading the property
            KeyRejectedException e = assertThrows(KeyRejectedException.class, () -> unlimited.derive(
                    settings(KeyStrategy.JSON_POINTER, false, "/orderId"), msg("order-1", Map.of(), nested(2_000_000)), null));
            assertTrue(e.getMessage().contains("payload is not valid JSON"), e.getMessage());
        } finally {
            if (before == null) {
                System.clearProperty("org.eclipse.parsson.maxDepth");
            } else {
                System.setProperty("org.eclipse.parsson.maxDepth", before);
            }
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
        MessageKey byId = keys.derive(settings(KeyStrategy.MESSAGE_ID, false), msg("id-1", Map.of(), "one"), null);
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
        ConsumerSettings s = settings(KeyStrategy.MESSAGE_ID, false);
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
        ConsumerSettings s = settings(KeyStrategy.MESSAGE_ID, true);
        MessageKey fallback = keys.derive(s, msg(null, Map.of(), "x"), null);
        assertEquals(keys.derive(content, msg(null, Map.of(), "x"), null).storeKey(), fallback.storeKey());
    }

    @Test
    void strategiesAreTaggedSoTheSameTextNeverCollidesAcrossThem() {
        MessageView m = msg("x", Map.of("k", "x"), "{\"id\":\"x\"}");
        String byId = keys.derive(settings(KeyStrategy.MESSAGE_ID, false), m, null).storeKey();
        String byHeader = keys.derive(settings(KeyStrategy.HEADER, false, "k"), m, null).storeKey();
        String byPointer = keys.derive(settings(KeyStrategy.JSON_POINTER, false, "/id"), m, null).storeKey();
        String byParam = keys.derive(settings(KeyStrategy.PARAMETER, false), m, "x").storeKey();
        assertEquals(4, java.util.Set.of(byId, byHeader, byPointer, byParam).size());
    }

    @Test
    void headerStrategyReadsTextAndBytesAndRejectsAMissingHeader() {
        ConsumerSettings s = settings(KeyStrategy.HEADER, false, "x-idempotency-key");
        String text = keys.derive(s, msg(null, Map.of("x-idempotency-key", "abc"), "1"), null).storeKey();
        String bytes = keys.derive(s, msg(null, Map.of("x-idempotency-key", "abc".getBytes(StandardCharsets.UTF_8)), "1"), null).storeKey();
        assertEquals(text, bytes);
        KeyRejectedException e = assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), "1"), null));
        assertTrue(e.getMessage().contains("x-idempotency-key"), e.getMessage());
    }

    @Test
    void jsonPointerReadsStringsAndNumbers() {
        ConsumerSettings s = settings(KeyStrategy.JSON_POINTER, false, "/order/id");
        String str = keys.derive(s, msg(null, Map.of(), "{\"order\":{\"id\":\"42\"}}"), null).storeKey();
        String num = keys.derive(s, msg(null, Map.of(), "{\"order\":{\"id\":42,\"qty\":1}}"), null).storeKey();
        assertEquals(str, num, "the key is the text of the value");
    }

    @Test
    void jsonPointerRejectsInvalidJsonMissingValuesAndNonScalars() {
        ConsumerSettings s = settings(KeyStrategy.JSON_POINTER, false, "/orderId");
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
        ConsumerSettings s = settings(KeyStrategy.JSON_POINTER, false, "/orderId");
        String secretBody = "{\"card\":\"4111111111111111\"";
        KeyRejectedException e = assertThrows(KeyRejectedException.class, () -> keys.derive(s, msg(null, Map.of(), secretBody), null));
        assertTrue(!e.getMessage().contains("4111"), e.getMessage());
    }

    @Test
    void parameterStrategyRejectsNullOrBlankAndOverlongKeys() {
        ConsumerSettings s = settings(KeyStrategy.PARAMETER, false);
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

    // ---- composite keys ----

    private MessageView tenantOrder(Object tenant, Object order) {
        Map<String, Object> headers = new java.util.HashMap<>();
        if (tenant != null) {
            headers.put("tenant", tenant);
        }
        if (order != null) {
            headers.put("order-id", order);
        }
        StringBuilder json = new StringBuilder("{\"sku\":\"w\"");
        if (tenant != null) {
            json.append(",\"tenant\":\"").append(tenant).append('"');
        }
        if (order != null) {
            json.append(",\"orderId\":\"").append(order).append('"');
        }
        return msg(null, headers, json.append('}').toString());
    }

    /**
     * A single header or pointer keeps the key of every version before composite keys: retained
     * claims and ledger rows must still match. Both digests were computed with the code before them.
     */
    @Test
    void singleHeaderAndPointerKeysAreUnchanged() {
        MessageView m = msg(null, Map.of("order-id", "o-1"), "{\"orderId\":\"o-1\",\"sku\":\"w\"}");
        MessageKey byHeader = keys.derive(settings(KeyStrategy.HEADER, false, "order-id"), m, null);
        MessageKey byPointer = keys.derive(settings(KeyStrategy.JSON_POINTER, false, "/orderId"), m, null);
        assertEquals("oo:orders:p8EFMcAGSS_Gm2D0OFzirw", byHeader.storeKey());
        assertEquals("oo:orders:YE3CwxQpcWHaRcjpv3h_kg", byPointer.storeKey());
        assertEquals("ANjl9rsJSdtk", byPointer.fingerprint(), "the body's fingerprint, as before");
    }

    /** Values that shift across the separator or hold ':' are different keys, for headers and pointers alike. */
    @Test
    void compositeKeysCannotBeShifted() {
        for (ConsumerSettings s : List.of(settings(KeyStrategy.HEADER, false, "tenant", "order-id"),
                settings(KeyStrategy.JSON_POINTER, false, "/tenant", "/orderId"))) {
            Set<String> seen = new HashSet<>();
            for (String[] parts : new String[][] {{"a,b", "c"}, {"a", "b,c"}, {"a:b", "c"}, {"a", "b:c"}, {"1:a", "c"}, {"a", "1:c"}}) {
                assertTrue(seen.add(keys.derive(s, tenantOrder(parts[0], parts[1]), null).storeKey()), s + " " + List.of(parts));
            }
            String single = keys.derive(Settings.withKey(s, s.keyStrategy(), false, s.keyParts().get(0)), tenantOrder("a", "c"), null)
                    .storeKey();
            assertTrue(seen.add(single), "a composite key never equals a single value's");
        }
    }

    /** The encoding docs/consumers.md's "Key format" documents and bin/onceonly-key computes: each part as its UTF-8 length, ':' and the value. */
    @Test
    void compositeKeysAreTheDocumentedLengthPrefixedParts() throws Exception {
        MessageView m = tenantOrder("t\u00fc,1", "o:7");
        assertEquals("oo:orders:" + digestOf("h+:5:t\u00fc,13:o:7"),
                keys.derive(settings(KeyStrategy.HEADER, false, "tenant", "order-id"), m, null).storeKey());
        assertEquals("oo:orders:" + digestOf("j+:5:t\u00fc,13:o:7"),
                keys.derive(settings(KeyStrategy.JSON_POINTER, false, "/tenant", "/orderId"), m, null).storeKey());
    }

    private static String digestOf(String tagged) throws Exception {
        byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(tagged.getBytes(StandardCharsets.UTF_8));
        return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(java.util.Arrays.copyOf(sha, 16));
    }

    @Test
    void aMissingPartRejectsNamingThePartOrFallsBackToTheContentKey() {
        ConsumerSettings byHeaders = settings(KeyStrategy.HEADER, false, "tenant", "order-id");
        KeyRejectedException header = assertThrows(KeyRejectedException.class,
                () -> keys.derive(byHeaders, tenantOrder("t-secret", null), null));
        assertTrue(header.getMessage().contains("'order-id'") && !header.getMessage().contains("t-secret"), header.getMessage());

        ConsumerSettings byPointers = settings(KeyStrategy.JSON_POINTER, false, "/tenant", "/orderId");
        KeyRejectedException pointer = assertThrows(KeyRejectedException.class,
                () -> keys.derive(byPointers, tenantOrder(null, "o-secret"), null));
        assertTrue(pointer.getMessage().contains("/tenant") && !pointer.getMessage().contains("o-secret"), pointer.getMessage());
        assertThrows(KeyRejectedException.class, () -> keys.derive(byPointers, tenantOrder("  ", "o-1"), null), "blank is missing");

        MessageView partial = tenantOrder("t-1", null);
        MessageKey fallback = keys.derive(settings(KeyStrategy.JSON_POINTER, true, "/tenant", "/orderId"), partial, null);
        assertEquals(keys.derive(content, partial, null).storeKey(), fallback.storeKey());
    }

    // ---- what a copy is compared on ----

    private MessageKey pointerKey(ConflictPolicy conflict, String body, String... fields) {
        ConsumerSettings s = Settings.withConflict(settings(KeyStrategy.JSON_POINTER, false, "/orderId"), conflict, fields);
        return keys.derive(s, msg(null, Map.of(), body), null);
    }

    @Test
    void conflictIgnoreComparesNothing() {
        MessageKey k = pointerKey(ConflictPolicy.IGNORE, "{\"orderId\":\"o-1\",\"qty\":1}");
        assertEquals("", k.fingerprint());
        assertEquals("", k.comparedHashHex());
        assertEquals(pointerKey(ConflictPolicy.STRICT, "{\"orderId\":\"o-1\"}").storeKey(), k.storeKey(), "the key itself is the same");
        assertTrue(k.matches("dpLDrTVAu4A8"), "a fingerprint stored under strict matches too");
    }

    @Test
    void conflictFieldsCompareOnlyThoseValuesWhateverTheirOrder() {
        MessageKey first = pointerKey(ConflictPolicy.STRICT,
                "{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":2,\"at\":\"10:00\",\"ship\":{\"a\":1,\"b\":[1,2]}}",
                "/sku", "/quantity", "/ship");
        MessageKey reserialised = pointerKey(ConflictPolicy.STRICT,
                "{ \"ship\": {\"b\": [1, 2], \"a\": 1}, \"at\": \"10:05\", \"quantity\": 2, \"sku\": \"w\", \"orderId\": \"o-1\" }",
                "/sku", "/quantity", "/ship");
        assertEquals(first.fingerprint(), reserialised.fingerprint());
        assertEquals(first.comparedHashHex(), reserialised.comparedHashHex());
        assertTrue(first.matches(reserialised.fingerprint()));

        Set<String> different = new HashSet<>(Set.of(first.comparedHashHex()));
        for (String body : new String[] {
                "{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":3,\"ship\":{\"a\":1,\"b\":[1,2]}}",
                "{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":2,\"ship\":{\"a\":1,\"b\":[2,1]}}",
                "{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":2.0,\"ship\":{\"a\":1,\"b\":[1,2]}}",
                "{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":\"2\",\"ship\":{\"a\":1,\"b\":[1,2]}}",
                "{\"orderId\":\"o-1\",\"sku\":\"w\",\"quantity\":null,\"ship\":{\"a\":1,\"b\":[1,2]}}",
                "{\"orderId\":\"o-1\",\"sku\":\"w\",\"ship\":{\"a\":1,\"b\":[1,2]}}",
                "{\"orderId\":\"o-1\",\"sku\":\"w\\u00e9\",\"quantity\":2,\"ship\":{\"a\":1,\"b\":[1,2]}}"}) {
            MessageKey other = pointerKey(ConflictPolicy.STRICT, body, "/sku", "/quantity", "/ship");
            assertTrue(different.add(other.comparedHashHex()), body);
            assertFalse(first.matches(other.fingerprint()), body);
        }
    }

    /** Values cannot shift from one compared field into the next. */
    @Test
    void conflictFieldValuesAreDelimited() {
        MessageKey a = pointerKey(ConflictPolicy.STRICT, "{\"orderId\":1,\"x\":\"ab\",\"y\":\"c\"}", "/x", "/y");
        MessageKey b = pointerKey(ConflictPolicy.STRICT, "{\"orderId\":1,\"x\":\"a\",\"y\":\"bc\"}", "/x", "/y");
        MessageKey c = pointerKey(ConflictPolicy.STRICT, "{\"orderId\":1,\"x\":12,\"y\":3}", "/x", "/y");
        MessageKey d = pointerKey(ConflictPolicy.STRICT, "{\"orderId\":1,\"x\":1,\"y\":23}", "/x", "/y");
        assertEquals(4, Set.of(a.comparedHashHex(), b.comparedHashHex(), c.comparedHashHex(), d.comparedHashHex()).size());
    }

    @Test
    void conflictFieldsNeedAJsonBody() {
        ConsumerSettings byHeader = Settings.withConflict(settings(KeyStrategy.HEADER, false, "order-id"), ConflictPolicy.STRICT, "/sku");
        KeyRejectedException e = assertThrows(KeyRejectedException.class,
                () -> keys.derive(byHeader, msg(null, Map.of("order-id", "o-1"), "sku=secret-widget"), null));
        assertTrue(e.getMessage().contains("conflict-fields need a JSON body") && !e.getMessage().contains("secret"), e.getMessage());
        MessageKey json = keys.derive(byHeader, msg(null, Map.of("order-id", "o-1"), "{\"sku\":\"w\"}"), null);
        assertEquals(12, json.fingerprint().length());
        MessageKey fallback = keys.derive(Settings.withKey(byHeader, KeyStrategy.HEADER, true, "order-id"),
                msg(null, Map.of(), "not json"), null);
        assertEquals("", fallback.fingerprint(), "a message on the content key compares no fields");
    }
}
