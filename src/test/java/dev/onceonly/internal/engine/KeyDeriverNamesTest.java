package dev.onceonly.internal.engine;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.FutureTask;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Exchange and routing key in the content key: escaped wherever the separator appears, and bounded as AMQP bounds them. */
class KeyDeriverNamesTest {

    private final KeyDeriver keys = new KeyDeriver("oo:");
    private final ConsumerSettings content = Settings.defaults("orders", KeyStrategy.CONTENT);

    private String key(String exchange, String routingKey) {
        return keys.derive(content, MessageView.of(exchange, routingKey, null, Map.of(), "{}".getBytes(StandardCharsets.UTF_8)), null)
                .storeKey();
    }

    /** A separator at the very start of a name is escaped too: unescaped, these two would be one key. */
    @Test
    void aNameStartingWithTheSeparatorCannotShiftIntoItsNeighbour() {
        assertNotEquals(key(":", ":c"), key("", "::c"));
        assertNotEquals(key("%3A", "c"), key(":", "c"), "an escape written literally is not the escaped character");
    }

    @Test
    void namesOfUpTo255CharactersAreKeys() {
        String longest = "e".repeat(KeyDeriver.MAX_NAME_LENGTH);
        assertEquals(key(longest, "rk"), key(longest, "rk"));
        assertThrows(KeyRejectedException.class, () -> key(longest + "e", "rk"));
        assertThrows(KeyRejectedException.class, () -> key("ex", longest + "r"));
    }

    /**
     * A derivation rejected halfway (the routing key too long, after the exchange went into the
     * thread's digest) leaves nothing behind: the next message on the thread gets its own key.
     */
    @Test
    void aKeyRejectedHalfwayDoesNotChangeTheNextKeyOnTheThread() throws Exception {
        FutureTask<String> fresh = new FutureTask<>(() -> key("ex", "rk")); // a thread whose digest is new
        new Thread(fresh).start();
        assertThrows(KeyRejectedException.class, () -> key("ex", "r".repeat(KeyDeriver.MAX_NAME_LENGTH + 1)));
        assertEquals(fresh.get(), key("ex", "rk"));
    }
}
