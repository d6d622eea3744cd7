package dev.onceonly.internal.engine;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.onceonly.api.IdempotencyContext;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.http.IdempotencyKeyHeader;
import dev.onceonly.internal.cdi.CurrentIdempotencyContext;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.internal.redis.RedisSettings;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.ForwardingClaimStore;
import dev.onceonly.testing.Guarded;
import dev.onceonly.testing.ScratchDatabase;
import dev.onceonly.testing.Settings;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The late holder, with the ledger off, on the machine's Redis (the claim script, which gives
 * fences) and PostgreSQL: holder A claims a message (fence n) and freezes past its lease; B, another
 * instance, claims it (fence above n), updates an external table and calls an HTTP service; A
 * resumes and does the same with n. The table's {@code WHERE fence < ?} and the service's check
 * (409 for a fence at or below the highest seen for the key) both refuse A. The same writes without
 * the check land, and overwrite B's: the fence is what stops A.
 */
class LateHolderFencingTest {

    private static final Duration LEASE = Duration.ofMillis(600);

    private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    private final ExecutorService instanceA = Executors.newSingleThreadExecutor();
    private final KeyDeriver keys = new KeyDeriver(TestRedis.uniquePrefix("fencing"));
    private final HttpClient http = HttpClient.newHttpClient();
    private ScratchDatabase db;
    private HttpServer service;
    /** The service's state per resource: who wrote last, and per key the highest fence it accepted. */
    private final Map<String, String> lastWriter = new ConcurrentHashMap<>();
    private final Map<String, Long> highestFence = new ConcurrentHashMap<>();

    @BeforeEach
    void start() throws Exception {
        db = ScratchDatabase.create(ScratchDatabase.Kind.POSTGRESQL, false);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute("create table fenced_account (id varchar(20) primary key, holder varchar(10) not null, fence bigint not null)");
            s.execute("insert into fenced_account values ('checked', 'nobody', 0), ('unchecked', 'nobody', 0)");
        }
        service = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        service.createContext("/checked", e -> answer(e, true));
        service.createContext("/unchecked", e -> answer(e, false));
        service.start();
    }

    @AfterEach
    void stop() throws SQLException {
        service.stop(0);
        instanceA.shutdownNow();
        scheduler.shutdownNow();
        db.close();
    }

    /** A version-checking service: with {@code checked}, a fence at or below the highest seen for the key is refused (409). */
    private void answer(HttpExchange e, boolean checked) throws IOException {
        String writer = new String(e.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String key = e.getRequestHeaders().getFirst(IdempotencyContext.HEADER);
        String fence = e.getRequestHeaders().getFirst(IdempotencyContext.FENCE_HEADER);
        int status = 200;
        if (checked) {
            long f = fence == null ? 0 : Long.parseLong(fence);
            Long before = highestFence.get(key);
            if (f <= 0 || before != null && f <= before) {
                status = 409;
            } else {
                highestFence.put(key, f);
            }
        }
        if (status == 200) {
            lastWriter.put(e.getHttpContext().getPath(), writer);
        }
        e.sendResponseHeaders(status, -1);
        e.close();
    }

    /** One holder's side effects: the table row and the service, each with and without the fence check. */
    private record Writes(long fence, int checkedRows, int uncheckedRows, int checkedStatus, int uncheckedStatus) {
    }

    /** What a handler does, inside the guard: its fence from {@link IdempotencyContext}, the headers from {@link IdempotencyKeyHeader}. */
    private Writes write(String holder) throws Exception {
        long fence = new CurrentIdempotencyContext().fence().orElseThrow();
        int checkedRows;
        int uncheckedRows;
        try (Connection c = db.connect()) {
            try (PreparedStatement s = c.prepareStatement("update fenced_account set holder = ?, fence = ? where id = 'checked' and fence < ?")) {
                s.setString(1, holder);
                s.setLong(2, fence);
                s.setLong(3, fence);
                checkedRows = s.executeUpdate();
            }
            try (PreparedStatement s = c.prepareStatement("update fenced_account set holder = ? where id = 'unchecked'")) {
                s.setString(1, holder);
                uncheckedRows = s.executeUpdate();
            }
        }
        return new Writes(fence, checkedRows, uncheckedRows, post("/checked", holder), post("/unchecked", holder));
    }

    private int post(String path, String holder) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + service.getAddress().getPort() + path);
        HttpRequest request = IdempotencyKeyHeader.apply(HttpRequest.newBuilder(uri))
                .POST(HttpRequest.BodyPublishers.ofString(holder)).build();
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private String holderOf(String id) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement s = c.prepareStatement("select holder from fenced_account where id = ?")) {
            s.setString(1, id);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getString(1);
            }
        }
    }

    @Test
    void theLateHoldersWritesAreRefusedByTheFenceAndLandWithoutIt() throws Exception {
        ConsumerSettings settings = Settings.withLease(Settings.defaults("payments", KeyStrategy.CONTENT), LEASE);
        MessageView message = MessageView.of("payments", "payment.requested", null, Map.of(),
                "{\"payment\":7}".getBytes(StandardCharsets.UTF_8));
        try (RedisClaimStore redisOfA = new RedisClaimStore(TestRedis.client(), RedisSettings.NativeClaim.OFF);
             RedisClaimStore redisOfB = new RedisClaimStore(TestRedis.client(), RedisSettings.NativeClaim.OFF)) {
            Frozen frozen = new Frozen(redisOfA);
            GuardEngine a = new GuardEngine(frozen, TransactionRunner.NONE, null, scheduler, event -> { }, keys);
            GuardEngine b = new GuardEngine(redisOfB, TransactionRunner.NONE, null, scheduler, event -> { }, keys);

            CountDownLatch aHolds = new CountDownLatch(1);
            CountDownLatch aResumes = new CountDownLatch(1);
            Future<Writes> aWrites = instanceA.submit(() -> {
                Writes[] done = new Writes[1];
                Guarded.call(a, settings, Dispatch.of(message), null, () -> {
                    // A freezes (a long GC, a suspended VM): its lease renewals stop with it.
                    frozen.frozen = true;
                    aHolds.countDown();
                    assertTrue(aResumes.await(30, TimeUnit.SECONDS));
                    frozen.frozen = false;
                    done[0] = write("A");
                    return null;
                });
                return done[0];
            });
            assertTrue(aHolds.await(10, TimeUnit.SECONDS));
            Thread.sleep(LEASE.toMillis() + 300); // A's lease runs out in Redis

            Writes[] bWrites = new Writes[1];
            Guarded.call(b, settings, Dispatch.of(message), null, () -> {
                bWrites[0] = write("B");
                return null;
            });
            aResumes.countDown();
            Writes late = aWrites.get(30, TimeUnit.SECONDS);
            Writes taker = bWrites[0];

            assertTrue(taker.fence() > late.fence(), "B's fence " + taker.fence() + " above A's " + late.fence());
            assertEquals(new Writes(taker.fence(), 1, 1, 200, 200), taker, "B, the current holder, writes everywhere");
            assertEquals(new Writes(late.fence(), 0, 1, 409, 200), late,
                    "A's late writes: refused where the fence is checked, landed where it is not");
            assertEquals("B", holderOf("checked"), "the fenced row keeps B's write");
            assertEquals("A", holderOf("unchecked"), "without the fence A overwrote B's newer write");
            assertEquals("B", lastWriter.get("/checked"));
            assertEquals("A", lastWriter.get("/unchecked"));
            a.close(Duration.ofSeconds(5));
            b.close(Duration.ofSeconds(5));
        }
    }

    /**
     * Instance A's connection to Redis while A is frozen: its lease renewals never reach Redis (the
     * engine believes them applied, as a frozen process believes nothing happened); all else passes.
     */
    private static final class Frozen extends ForwardingClaimStore {
        volatile boolean frozen;

        Frozen(ClaimStore store) {
            super(store);
        }

        @Override
        public HolderResult extend(String key, String token, Duration lease) {
            return frozen ? HolderResult.APPLIED : store.extend(key, token, lease);
        }
    }
}
