package dev.onceonly.internal.engine;

import dev.onceonly.testing.ForwardingClaimStore;
import dev.onceonly.testing.Guarded;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The claim's token is what fences one holder of a key from the next: a holder whose lease ran out
 * may renew, complete or release only a claim that is still its own. So every claim the engine
 * takes carries a token no other claim has, also two claims of the same key.
 */
class ClaimTokenTest {

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private final TokenRecordingStore store = new TokenRecordingStore(new InMemoryClaimStore(1_000, new MutableClock()));
    private final GuardEngine engine = new GuardEngine(store, TransactionRunner.NONE, null, scheduler, e -> { },
            new KeyDeriver("oo:"));
    private final ConsumerSettings orders = Settings.defaults("orders", KeyStrategy.CONTENT);

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    @Test
    void everyClaimCarriesATokenOfItsOwn() throws Exception {
        guard("a", false);
        guard("b", false);
        assertThrows(IllegalStateException.class, () -> guard("c", true)); // failed: released, claimed again below
        guard("c", false);

        assertEquals(4, store.tokens.size(), store.tokens.toString());
        assertEquals(4, new HashSet<>(store.tokens).size(), "no two claims share a token, not even two of one key");
        for (String token : store.tokens) {
            assertTrue(token.length() >= 16, "long enough not to be guessed or repeated: " + token.length());
        }
    }

    private void guard(String body, boolean fail) throws Exception {
        MessageView m = MessageView.of("orders", "placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
        Guarded.call(engine, orders, Dispatch.of(m), null, () -> {
            if (fail) {
                throw new IllegalStateException("handler failed");
            }
            return null;
        });
    }

    /** The in-memory store, noting the token of every claim. */
    private static final class TokenRecordingStore extends ForwardingClaimStore {
        final List<String> tokens = new CopyOnWriteArrayList<>();

        TokenRecordingStore(ClaimStore store) {
            super(store);
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            tokens.add(token);
            return store.claim(key, token, fingerprint, lease);
        }

        @Override
        public String name() {
            return "recording";
        }

        @Override
        public Optional<String> problem() {
            return Optional.empty();
        }

        @Override
        public void close() {
        }
    }
}
