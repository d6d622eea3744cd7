package dev.onceonly.internal.redis;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStoreException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * TLS to Redis, tested rather than only configured: a Redis with a TLS port and a certificate from
 * a CA the test makes, naming {@code localhost} only. The store trusts that CA (its trust store),
 * checks the host name (Jedis checks none by default: any certificate from a trusted CA would do),
 * and refuses a server whose certificate another CA signed.
 */
class RedisTlsTest {

    static Path dir;
    static Process good;
    static Process rogue;
    static int goodPort;
    static int roguePort;
    static Path truststore;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("onceonly-tls");
        ca("ca");
        ca("rogue-ca");
        serverCert("server", "ca");
        serverCert("rogue-server", "rogue-ca");
        truststore = dir.resolve("trust.p12");
        run("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", dir.resolve("ca.crt").toString(),
                "-keystore", truststore.toString(), "-storetype", "PKCS12", "-storepass", "changeit");
        goodPort = freePort();
        roguePort = freePort();
        good = redis(goodPort, "server", "ca");
        rogue = redis(roguePort, "rogue-server", "rogue-ca");
    }

    @AfterAll
    static void stop() throws Exception {
        for (Process p : new Process[] {good, rogue}) {
            if (p != null) {
                p.destroy();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static RedisSettings settings(String host, int port, boolean verifyHostname) {
        return new RedisSettings(RedisSettings.Mode.STANDALONE, List.of(host + ":" + port), "", true, null, null, 0,
                Duration.ofSeconds(2), Duration.ofSeconds(2), 2, RedisSettings.SentinelAuth.NONE,
                new RedisSettings.TlsTrust(truststore, "changeit", "PKCS12", verifyHostname));
    }

    private static ClaimResult claimThrough(RedisSettings settings) {
        try (RedisClaimStore store = new RedisClaimStore(RedisConnection.client(settings))) {
            return store.claim("oo:tls:" + UUID.randomUUID(), "t1", "fp", Duration.ofSeconds(5));
        }
    }

    @Test
    void aServerOfTheTrustedCaNamedAsConnectedIsAccepted() {
        assertEquals(ClaimState.ACQUIRED, claimThrough(settings("localhost", goodPort, true)).state());
    }

    @Test
    void aCertificateThatDoesNotNameTheHostIsRefused() {
        // The certificate names localhost, not 127.0.0.1.
        assertThrows(ClaimStoreException.class, () -> claimThrough(settings("127.0.0.1", goodPort, true)));
        assertEquals(ClaimState.ACQUIRED, claimThrough(settings("127.0.0.1", goodPort, false)).state(), "only the name was wrong");
    }

    @Test
    void aServerOfAnotherCaIsRefused() {
        assertThrows(ClaimStoreException.class, () -> claimThrough(settings("localhost", roguePort, true)));
    }

    private static void ca(String name) throws Exception {
        run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=" + name,
                "-keyout", dir.resolve(name + ".key").toString(), "-out", dir.resolve(name + ".crt").toString());
    }

    private static void serverCert(String name, String ca) throws Exception {
        Path ext = dir.resolve(name + ".ext");
        Files.writeString(ext, "subjectAltName=DNS:localhost\n", StandardCharsets.US_ASCII);
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                "-keyout", dir.resolve(name + ".key").toString(), "-out", dir.resolve(name + ".csr").toString());
        run("openssl", "x509", "-req", "-days", "2", "-in", dir.resolve(name + ".csr").toString(),
                "-CA", dir.resolve(ca + ".crt").toString(), "-CAkey", dir.resolve(ca + ".key").toString(), "-CAcreateserial",
                "-extfile", ext.toString(), "-out", dir.resolve(name + ".crt").toString());
    }

    private static Process redis(int port, String cert, String ca) throws Exception {
        Process p = new ProcessBuilder("redis-server", "--port", "0", "--tls-port", Integer.toString(port), "--bind", "127.0.0.1",
                "--tls-cert-file", dir.resolve(cert + ".crt").toString(), "--tls-key-file", dir.resolve(cert + ".key").toString(),
                "--tls-ca-cert-file", dir.resolve(ca + ".crt").toString(), "--tls-auth-clients", "no",
                "--save", "", "--appendonly", "no")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!listening(port)) {
            if (System.nanoTime() > deadline || !p.isAlive()) {
                throw new IllegalStateException("redis-server with TLS did not start on " + port);
            }
            Thread.sleep(50);
        }
        return p;
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(new ArrayList<>(List.of(cmd))).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static boolean listening(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
