package dev.onceonly.internal.redis;

import dev.onceonly.spi.ClaimState;
import dev.onceonly.testing.PrivateRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Sentinel mode against a real sentinel (a redis-server in sentinel mode on loopback) that
 * requires a password of its own. Before, the store sent no credentials to the sentinels and could
 * not find the master behind a protected sentinel at all.
 */
class RedisSentinelAuthTest {

    private static final String SENTINEL_PASSWORD = "s3ntinel/p@ss";

    PrivateRedis master;
    Process sentinel;
    Path dir;
    int sentinelPort;

    @BeforeEach
    void start() throws Exception {
        master = new PrivateRedis();
        dir = Files.createTempDirectory("onceonly-sentinel");
        try (ServerSocket s = new ServerSocket(0)) {
            sentinelPort = s.getLocalPort();
        }
        Path conf = dir.resolve("sentinel.conf");
        Files.writeString(conf, String.join("\n",
                "port " + sentinelPort,
                "bind 127.0.0.1",
                "dir " + dir,
                "requirepass \"" + SENTINEL_PASSWORD + "\"",
                "sentinel monitor m 127.0.0.1 " + master.port() + " 1",
                "") );
        sentinel = new ProcessBuilder("redis-server", conf.toString(), "--sentinel")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!listening(sentinelPort)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("sentinel did not start");
            }
            Thread.sleep(50);
        }
    }

    @AfterEach
    void stop() throws Exception {
        sentinel.destroy();
        sentinel.waitFor(10, TimeUnit.SECONDS);
        master.close();
    }

    private RedisSettings settings(RedisSettings.SentinelAuth auth) {
        return new RedisSettings(RedisSettings.Mode.SENTINEL, List.of("127.0.0.1:" + sentinelPort), "m", false, null, null, 0,
                Duration.ofSeconds(1), Duration.ofSeconds(1), 2, auth);
    }

    @Test
    void theStoreAuthenticatesToTheSentinels() {
        try (RedisClaimStore store = new RedisClaimStore(RedisConnection.client(
                settings(new RedisSettings.SentinelAuth(null, SENTINEL_PASSWORD, false))))) {
            assertEquals(ClaimState.ACQUIRED, store.claim("oo:sentinel:" + UUID.randomUUID(), "t1", "fp", Duration.ofSeconds(5)).state());
        }
    }

    @Test
    void withoutTheSentinelsPasswordTheMasterIsNotFound() {
        assertThrows(RuntimeException.class, () -> {
            try (RedisClaimStore store = new RedisClaimStore(RedisConnection.client(settings(RedisSettings.SentinelAuth.NONE)))) {
                store.claim("oo:sentinel:" + UUID.randomUUID(), "t1", "fp", Duration.ofSeconds(5));
            }
        });
    }

    @Test
    void theSentinelsPasswordNeverShows() {
        assertFalse(settings(new RedisSettings.SentinelAuth("u", SENTINEL_PASSWORD, false)).toString().contains("p@ss"));
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
