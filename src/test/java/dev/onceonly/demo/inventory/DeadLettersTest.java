package dev.onceonly.demo.inventory;

import dev.onceonly.rabbitmq.RabbitHeaders;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeadLettersTest {

    private static final String INVALID = "{\"orderId\":\"secret-order-id\",\"sku\":\"widget\",\"quantity\":-3}";

    @Test
    void aDeadLetterShowsItsReasonHeadersDigestAndOrderFieldsButNeverTheBodyOrKey() {
        DeadLetters letters = new DeadLetters();
        DeadLetters.Letter l = letters.add(7, INVALID, Map.of(
                RabbitHeaders.OUTCOME, "FAILED",
                RabbitHeaders.REASON, "dev.onceonly.demo.inventory.InvalidOrderException: invalid order: quantity ...",
                RabbitHeaders.ATTEMPTS, 5,
                RabbitHeaders.SIGNATURE, "hmac",
                "x-private", "not shown"));

        assertEquals(Map.of(RabbitHeaders.OUTCOME, "FAILED", RabbitHeaders.ATTEMPTS, "5",
                RabbitHeaders.REASON, "dev.onceonly.demo.inventory.InvalidOrderException: invalid order: quantity ..."), l.headers());
        assertEquals(DeadLetters.sha256(INVALID.getBytes(StandardCharsets.UTF_8)), l.bodySha256());
        assertEquals(64, l.bodySha256().length());
        assertEquals(Optional.of("widget"), l.sku());
        assertEquals(Optional.of("-3"), l.quantity());
        String json = l.toJson().toString();
        assertFalse(json.contains("secret-order-id"), json);
        assertFalse(json.contains("hmac"), json);
        assertEquals(INVALID, l.body(), "kept on the server, to send it back");
    }

    @Test
    void aBodyThatIsNotAnOrderShowsOnlyItsDigestAndSize() {
        DeadLetters.Letter l = new DeadLetters().add(1, "not json <script>", Map.of(RabbitHeaders.OUTCOME, "REJECTED"));
        assertEquals(Optional.empty(), l.sku());
        assertEquals(Optional.empty(), l.quantity());
        assertEquals(17, l.bytes());
        assertFalse(l.toJson().toString().contains("script"));
    }

    @Test
    void longValuesAreCutAndBinaryHeadersShowTheirSize() {
        String sku = "s".repeat(60);
        DeadLetters.Letter l = new DeadLetters().add(1, "{\"sku\":\"" + sku + "\"}",
                Map.of(RabbitHeaders.REASON, "r".repeat(1000), RabbitHeaders.QUEUE, new byte[]{(byte) 0xff, 0}));
        assertEquals("s".repeat(40) + "...", l.sku().orElseThrow());
        assertEquals(303, l.headers().get(RabbitHeaders.REASON).length());
        assertEquals("(2 bytes)", l.headers().get(RabbitHeaders.QUEUE));
    }

    @Test
    void theListKeepsTheNewestAndATakenLetterLeavesIt() {
        DeadLetters letters = new DeadLetters();
        for (int i = 0; i < DeadLetters.KEPT + 5; i++) {
            letters.add(i, "{\"n\":" + i + "}", Map.of());
        }
        List<DeadLetters.Letter> kept = letters.kept();
        assertEquals(DeadLetters.KEPT, kept.size());
        assertEquals(DeadLetters.KEPT + 5, kept.get(0).id(), "newest first");
        assertEquals(6, kept.get(kept.size() - 1).id());
        assertEquals(DeadLetters.KEPT + 5, letters.received(), "every one counted");

        DeadLetters.Letter taken = letters.take(10).orElseThrow();
        assertTrue(letters.take(10).isEmpty(), "taken once");
        assertEquals(DeadLetters.KEPT - 1, letters.kept().size());
        letters.putBack(taken);
        assertTrue(letters.kept().stream().anyMatch(l -> l.id() == 10));
    }
}
