package dev.onceonly.ops;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.engine.MessageKey;
import dev.onceonly.internal.ledger.jpa.JpaLedger;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import dev.onceonly.testing.Settings;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/onceonly-key}, the operator's way from a message to its claim and ledger row: it
 * derives the same key as the library for every strategy, and reads the real store's and the real
 * ledger's state of it.
 */
class OnceOnlyKeyScriptTest {

    private static final Path SCRIPT = Path.of("bin", "onceonly-key");
    private final KeyDeriver keys = new KeyDeriver("oo:");
    private final ConsumerSettings content = Settings.defaults("orders", KeyStrategy.CONTENT);

    private MessageKey derive(KeyStrategy strategy, MessageView m, Object parameter, String... parts) {
        return keys.derive(Settings.withKey(content, strategy, false, parts), m, parameter);
    }

    @Test
    void derivesTheLibrarysKeyForEveryStrategy() throws Exception {
        byte[] body = "{\"orderId\":\"o-7\",\"sku\":\"w\"}".getBytes(StandardCharsets.UTF_8);
        MessageView m = MessageView.of("orders:eu%1", "order.placed", "mid-42", Map.of("order-id", "h-9"), body);
        Path file = Files.createTempFile("onceonly-key", ".json");
        Files.write(file, body);

        assertEquals(derive(KeyStrategy.MESSAGE_ID, m, null).storeKey(), key("--message-id", "mid-42"));
        assertEquals(derive(KeyStrategy.HEADER, m, null, "order-id").storeKey(), key("--header-value", "h-9"));
        assertEquals(derive(KeyStrategy.JSON_POINTER, m, null, "/orderId").storeKey(), key("--json-pointer-value", "o-7"));
        assertEquals(derive(KeyStrategy.PARAMETER, m, "p-1").storeKey(), key("--parameter", "p-1"));
        // Composite keys: one option per part, in the consumer's order; values with ',', ':' and non-ASCII.
        MessageView parts = MessageView.of("orders", "order.placed", null, Map.of("tenant", "t\u00fc,1", "order-id", "o:7"),
                "{\"tenant\":\"t\u00fc,1\",\"orderId\":\"o:7\"}".getBytes(StandardCharsets.UTF_8));
        assertEquals(derive(KeyStrategy.HEADER, parts, null, "tenant", "order-id").storeKey(),
                key("--header-value", "t\u00fc,1", "--header-value", "o:7"));
        assertEquals(derive(KeyStrategy.JSON_POINTER, parts, null, "/tenant", "/orderId").storeKey(),
                key("--json-pointer-value", "t\u00fc,1", "--json-pointer-value", "o:7"));
        // The exchange holds ':' and '%', which the content key escapes.
        assertEquals(derive(KeyStrategy.CONTENT, m, null).storeKey(),
                key("--content", file.toString(), "--exchange", "orders:eu%1", "--routing-key", "order.placed"));
    }

    @Test
    void derivesUnderAnotherApplicationsPrefix() throws Exception {
        byte[] body = "{\"orderId\":\"o-7\"}".getBytes(StandardCharsets.UTF_8);
        MessageView m = MessageView.of("orders", "order.placed", null, Map.of(), body);
        MessageKey expected = new KeyDeriver("billing:").derive(
                Settings.withKey(content, KeyStrategy.JSON_POINTER, false, "/orderId"), m, null);
        assertEquals(expected.storeKey(), key("--prefix", "billing:", "--json-pointer-value", "o-7"));
    }

    @Test
    void helpIsTheHeaderCommentAndNothingElse() throws Exception {
        Process p = new ProcessBuilder(SCRIPT.toString(), "--help").redirectErrorStream(true).start();
        List<String> help = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(2, p.exitValue());
        List<String> header = Files.readAllLines(SCRIPT).stream().skip(1).takeWhile(l -> l.startsWith("#"))
                .map(l -> l.replaceFirst("^# ?", "")).toList();
        assertEquals(header, help);
        assertTrue(help.stream().anyMatch(l -> l.contains("--prefix") && l.startsWith("  bin/onceonly-key")), help.toString());
    }

    @Test
    void showsTheClaimInRedisAndTheLedgerRow() throws Exception {
        String id = "o-" + UUID.randomUUID();
        MessageKey k = derive(KeyStrategy.JSON_POINTER,
                MessageView.of("", "", null, Map.of(), ("{\"orderId\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8)), null, "/orderId");
        List<String> none = run("--consumer", "orders", "--json-pointer-value", id, "--redis", TestRedis.url());
        assertTrue(none.contains("redis:      no claim (never claimed, released, expired or purged)"), none.toString());

        try (RedisClaimStore store = new RedisClaimStore(TestRedis.client());
             ScratchDatabase db = ScratchDatabase.create(ScratchDatabase.Kind.POSTGRESQL, true)) {
            String token = UUID.randomUUID().toString();
            assertEquals(ClaimState.ACQUIRED, store.claim(k.storeKey(), token, k.fingerprint(), Duration.ofSeconds(30)).state());
            List<String> held = run("--consumer", "orders", "--json-pointer-value", id, "--redis", TestRedis.url());
            assertTrue(held.stream().anyMatch(l -> l.startsWith("redis:      IN PROGRESS (lease), fingerprint " + k.fingerprint())),
                    held.toString());

            store.complete(k.storeKey(), token, k.fingerprint(), Duration.ofMinutes(5));
            LocalJta jta = new LocalJta(db.sessionFactory());
            JpaLedger ledger = new JpaLedger("oo:", db.tables().ledger(), jta::entityManager, jta, Clock.systemUTC());
            jta.call(() -> ledger.insert(k.storeKey(), "orders", k.comparedHashHex()));
            List<String> done = run("--consumer", "orders", "--json-pointer-value", id, "--redis", TestRedis.url(),
                    "--psql", "postgresql://postgres@127.0.0.1:5432/test?options=-csearch_path%3D" + db.name());
            assertTrue(done.stream().anyMatch(l -> l.startsWith("redis:      DONE, fingerprint " + k.fingerprint() + ", expires in ")),
                    done.toString());
            assertTrue(done.stream().anyMatch(l -> l.startsWith("ledger:     " + k.storeKey() + " | orders | "
                    + k.comparedHashHex().substring(0, 16) + " | ")), done.toString());
        } finally {
            try (var redis = TestRedis.client()) {
                redis.del(k.storeKey());
            }
        }
    }

    /** The key the script prints for consumer "orders" and the given key source. */
    private static String key(String... source) throws Exception {
        List<String> args = new ArrayList<>(List.of("--consumer", "orders"));
        args.addAll(List.of(source));
        return run(args.toArray(String[]::new)).stream().filter(l -> l.startsWith("key:")).findFirst().orElseThrow()
                .substring("key:".length()).trim();
    }

    private static List<String> run(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(SCRIPT.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out.lines().toList();
    }
}
