package dev.onceonly.internal.redis;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.contract.Fences;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.BatchClaimStore.ClaimRequest;
import dev.onceonly.spi.BatchClaimStore.CompleteRequest;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.testing.PrivateRedis;
import dev.onceonly.testing.RespProxy;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What only the Redis store has: script cache recovery, round trips, the native claim, foreign values, an unreachable server. */
class RedisClaimStoreBehaviourTest {

    private RedisClient admin;
    private RedisClaimStore store;
    private String prefix;

    @BeforeEach
    void open() {
        admin = TestRedis.client();
        store = new RedisClaimStore(TestRedis.client());
        prefix = TestRedis.uniquePrefix("behaviour");
    }

    @AfterEach
    void close() {
        store.close();
        admin.close();
    }

    @Test
    void scriptsAreReloadedAfterTheServerForgotThem() {
        store.claim(prefix + "a", "t1", "fp", Duration.ofSeconds(5));
        admin.scriptFlush();
        assertEquals(ClaimState.ACQUIRED, store.claim(prefix + "b", "t1", "fp", Duration.ofSeconds(5)).state());
        admin.scriptFlush();
        assertEquals(HolderResult.APPLIED, store.complete(prefix + "b", "t1", "fp", Duration.ofSeconds(5)));
    }

    /**
     * A done key without a fingerprint (content keys) is the small integer 1, which Redis keeps as one
     * shared object ("int" encoding, refcount shared) rather than a string per key; one with a
     * fingerprint keeps it; a "D" written by an earlier version still reads as done.
     */
    @Test
    void aDoneContentKeyIsASharedIntegerAndOlderValuesStillRead() {
        String content = prefix + "content";
        store.claim(content, "t1", "", Duration.ofSeconds(5));
        store.complete(content, "t1", "", Duration.ofSeconds(60));
        assertEquals("1", admin.get(content));
        assertEquals("int", admin.objectEncoding(content));
        assertEquals(ClaimResult.done(""), store.claim(content, "t2", "", Duration.ofSeconds(5)));

        String explicit = prefix + "explicit";
        store.claim(explicit, "t1", "fp", Duration.ofSeconds(5));
        store.complete(explicit, "t1", "fp", Duration.ofSeconds(60));
        assertEquals("Dfp", admin.get(explicit));

        String older = prefix + "older";
        admin.psetex(older, 60_000, "D");
        assertEquals(ClaimResult.done(""), store.claim(older, "t3", "", Duration.ofSeconds(5)));
    }

    /**
     * One command per primitive: a fresh message costs claim + complete = 2, a duplicate costs 1, with
     * the native claim and with the script alike. Counted by a proxy on the wire in front of a Redis
     * of the test's own, so no other client's commands, and none a script runs, are counted.
     */
    @Test
    void freshMessageCostsTwoCommandsAndADuplicateOne() throws Exception {
        for (RedisSettings.NativeClaim claim : RedisSettings.NativeClaim.values()) {
            try (PrivateRedis own = new PrivateRedis(); RespProxy wire = new RespProxy(own.port(), false);
                 RedisClaimStore ownStore = new RedisClaimStore(RedisClient.create(new HostAndPort("127.0.0.1", wire.port())), claim)) {
                ownStore.claim(prefix + "warm", "t0", "", Duration.ofSeconds(5)); // connection open, scripts cached
                ownStore.complete(prefix + "warm", "t0", "", Duration.ofSeconds(5));

                int before = wire.commands();
                ownStore.claim(prefix + "fresh", "t1", "", Duration.ofSeconds(5));
                ownStore.complete(prefix + "fresh", "t1", "", Duration.ofSeconds(60));
                int fresh = wire.commands() - before;
                before = wire.commands();
                assertEquals(ClaimResult.done(""), ownStore.claim(prefix + "fresh", "t2", "", Duration.ofSeconds(5)));
                int duplicate = wire.commands() - before;

                assertEquals(2, fresh, "commands for claim + complete of a fresh message, native-claim " + claim);
                assertEquals(1, duplicate, "commands for a duplicate, native-claim " + claim);
            }
        }
    }

    /**
     * A claim is one native SET (no script) unless switched off, and both ways leave the same value
     * and lease in Redis. Told apart by Redis's own counts on a Redis of the test's own.
     */
    @Test
    void aClaimIsANativeSetUnlessSwitchedOffAndTheScriptWritesTheSameWithItsFence() throws Exception {
        try (PrivateRedis own = new PrivateRedis(); RedisClient ownAdmin = own.client();
             RedisClaimStore nativeStore = new RedisClaimStore(own.client());
             RedisClaimStore scriptStore = new RedisClaimStore(own.client(), RedisSettings.NativeClaim.OFF)) {
            Map<String, Long> before = calls(ownAdmin);
            assertEquals(ClaimState.ACQUIRED, nativeStore.claim("native", "t1", "fp", Duration.ofSeconds(30)).state());
            Map<String, Long> afterNative = calls(ownAdmin);
            ClaimResult scripted = scriptStore.claim("script", "t1", "fp", Duration.ofSeconds(30));
            assertEquals(ClaimState.ACQUIRED, scripted.state());
            Map<String, Long> afterScript = calls(ownAdmin);

            assertEquals(1, delta(before, afterNative, "set"), "native claim: one SET");
            assertEquals(0, delta(before, afterNative, "evalsha") + delta(before, afterNative, "eval"), "native claim: no script");
            // EVALSHA, and on this new server first NOSCRIPT then EVAL: a script either way.
            assertTrue(delta(afterNative, afterScript, "evalsha") + delta(afterNative, afterScript, "eval") > 0, "script claim");

            assertEquals("Pt1|fp", ownAdmin.get("native"));
            assertEquals("Pt1|fp|" + scripted.fence(), ownAdmin.get("script"), "the same, and the script's fence after it");
            // Redis runs on this machine: its clock is this one.
            long nowMicros = System.currentTimeMillis() * 1_000;
            assertTrue(Math.abs(scripted.fence() - nowMicros) < 5_000_000,
                    "the fence is Redis's clock in microseconds: " + scripted.fence() + ", now " + nowMicros);
            for (String key : new String[] {"native", "script"}) {
                long ttl = ownAdmin.pttl(key);
                assertTrue(ttl > 29_000 && ttl <= 30_000, key + " lease " + ttl);
            }
            // Each path answers for what the other wrote.
            assertEquals(ClaimResult.inProgress("fp"), nativeStore.claim("script", "t2", "other", Duration.ofSeconds(30)));
            assertEquals(ClaimResult.inProgress("fp"), scriptStore.claim("native", "t2", "other", Duration.ofSeconds(30)));
        }
    }

    /** Calls per command since the server started, from {@code INFO commandstats}. */
    private static Map<String, Long> calls(RedisClient admin) {
        Map<String, Long> calls = new java.util.HashMap<>();
        for (String line : admin.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String fields = line.substring(line.indexOf(':') + 1);
                calls.put(line.substring("cmdstat_".length(), line.indexOf(':')),
                        Long.parseLong(fields.substring("calls=".length(), fields.indexOf(','))));
            }
        }
        return calls;
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String command) {
        return after.getOrDefault(command, 0L) - before.getOrDefault(command, 0L);
    }

    /** Connections Redis dropped (as after a restart) cost no message: the store retries once on a fresh one. */
    @Test
    void connectionsRedisClosedAreReplacedWithoutFailingTheCall() throws Exception {
        try (PrivateRedis own = new PrivateRedis(); RedisClient ownAdmin = own.client();
             RedisClaimStore ownStore = new RedisClaimStore(own.client())) {
            assertEquals(ClaimState.ACQUIRED, ownStore.claim("k1", "t1", "fp", Duration.ofSeconds(5)).state());
            Object killed = ownAdmin.sendCommand(redis.clients.jedis.Protocol.Command.CLIENT, "KILL", "TYPE", "normal", "SKIPME", "yes");
            assertEquals(1L, killed, "the store's pooled connection was closed by Redis");
            assertEquals(ClaimState.ACQUIRED, ownStore.claim("k2", "t1", "fp", Duration.ofSeconds(5)).state());
            assertEquals(HolderResult.APPLIED, ownStore.complete("k2", "t1", "fp", Duration.ofSeconds(5)));
        }
    }

    @Test
    void aValueOnceOnlyDidNotWriteIsAStoreErrorNotAGuess() {
        admin.set(prefix + "foreign", "something else");
        ClaimStoreException e = assertThrows(ClaimStoreException.class,
                () -> store.claim(prefix + "foreign", "t1", "fp", Duration.ofSeconds(5)));
        assertEquals("claim", e.operation());
    }

    @Test
    void unreachableRedisSurfacesAsClaimStoreException() {
        RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, java.util.List.of("127.0.0.1:1"), "",
                false, null, "secret-password", 0, Duration.ofMillis(200), Duration.ofMillis(200), 2);
        try (RedisClaimStore down = new RedisClaimStore(RedisConnection.client(settings))) {
            ClaimStoreException e = assertThrows(ClaimStoreException.class,
                    () -> down.claim(prefix + "x", "t1", "fp", Duration.ofSeconds(5)));
            assertEquals("redis", e.store());
            assertEquals(false, e.getMessage().contains("secret-password"), "no secret in the message");
            assertTrue(down.problem().isPresent(), "readiness names the problem");
        }
        assertEquals(false, settings.toString().contains("secret-password"));
    }

    /**
     * A paused Redis (SIGSTOP: it keeps its socket and answers nothing) costs a command no more than
     * Jedis's own read of it (about two socket timeouts), then a ClaimStoreException. Before, the
     * timeout was retried on a fresh connection (which the paused server also accepts and never
     * answers): three socket timeouts and more.
     */
    @Test
    void aPausedRedisCostsOneReadThenCommandsFailFast() throws Exception {
        Duration socketTimeout = Duration.ofMillis(1000);
        try (dev.onceonly.testing.PrivateRedis paused = new dev.onceonly.testing.PrivateRedis()) {
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, java.util.List.of("127.0.0.1:" + paused.port()),
                    "", false, null, null, 0, Duration.ofMillis(500), socketTimeout, 4);
            try (RedisClaimStore store = new RedisClaimStore(RedisConnection.client(settings), socketTimeout)) {
                store.claim(prefix + "warm", "t0", "fp", Duration.ofSeconds(5)); // a pooled connection exists
                paused.pause();
                try {
                    long start = System.nanoTime();
                    assertThrows(ClaimStoreException.class, () -> store.claim(prefix + "p", "t1", "fp", Duration.ofSeconds(5)));
                    Duration took = Duration.ofNanos(System.nanoTime() - start);
                    // Jedis's own read of one command waits up to about twice the socket timeout; the bound
                    // under test is that nothing is added to it (before: a retry made it three times).
                    assertTrue(took.compareTo(socketTimeout.multipliedBy(5).dividedBy(2)) < 0, "took " + took.toMillis() + " ms");
                    // The messages right after it do not each wait their own timeout: they fail at once.
                    for (int i = 0; i < 5; i++) {
                        long s0 = System.nanoTime();
                        int n = i;
                        assertThrows(ClaimStoreException.class, () -> store.claim(prefix + "q" + n, "t1", "fp", Duration.ofSeconds(5)));
                        Duration quick = Duration.ofNanos(System.nanoTime() - s0);
                        assertTrue(quick.compareTo(socketTimeout.dividedBy(2)) < 0, "waited " + quick.toMillis() + " ms");
                    }
                } finally {
                    paused.resume();
                }
                dev.onceonly.testing.Eventually.await("Redis asked again after the quiet time", Duration.ofSeconds(10), () -> {
                    try {
                        return store.claim(prefix + "after", "t2", "fp", Duration.ofSeconds(5));
                    } catch (ClaimStoreException stillQuiet) {
                        return null;
                    }
                }, r -> r != null && r.state() == ClaimState.ACQUIRED);
            }
        }
    }

    /**
     * A completion (or release) applied by Redis whose reply was lost with its connection is
     * retried on another connection; the retry finds the key already done (gone) and that is the
     * holder's own doing, not a lost lease. Before, it answered NOT_HOLDER: a false ONCE0103W and a
     * false lease-lost count.
     */
    @Test
    void aCompletionWhoseReplyWasLostIsStillApplied() throws Exception {
        try (dev.onceonly.testing.PrivateRedis server = new dev.onceonly.testing.PrivateRedis();
             dev.onceonly.testing.TcpProxy proxy = new dev.onceonly.testing.TcpProxy(server.port())) {
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, java.util.List.of("127.0.0.1:" + proxy.port()),
                    "", false, null, null, 0, Duration.ofSeconds(2), Duration.ofSeconds(2), 4);
            try (RedisClaimStore store = new RedisClaimStore(RedisConnection.client(settings))) {
                // Every script loaded first: the lost reply must be the command's own, not a NOSCRIPT.
                store.claim(prefix + "warm", "t0", "fp", Duration.ofSeconds(30));
                store.complete(prefix + "warm", "t0", "fp", Duration.ofSeconds(30));
                store.claim(prefix + "warm2", "t0", "fp", Duration.ofSeconds(30));
                store.release(prefix + "warm2", "t0");
                String done = prefix + "lost-reply-done";
                assertEquals(ClaimState.ACQUIRED, store.claim(done, "t1", "fp", Duration.ofSeconds(30)).state());
                proxy.dropNextReply();
                assertEquals(dev.onceonly.spi.HolderResult.APPLIED, store.complete(done, "t1", "fp", Duration.ofHours(1)));
                assertEquals(dev.onceonly.spi.ClaimResult.done("fp"), store.claim(done, "t2", "fp", Duration.ofSeconds(30)));

                String released = prefix + "lost-reply-released";
                assertEquals(ClaimState.ACQUIRED, store.claim(released, "t1", "fp", Duration.ofSeconds(30)).state());
                proxy.dropNextReply();
                assertEquals(dev.onceonly.spi.HolderResult.APPLIED, store.release(released, "t1"));

                // Someone else's claim is still not ours to complete.
                String other = prefix + "lost-reply-other";
                store.claim(other, "t9", "fp", Duration.ofSeconds(30));
                assertEquals(dev.onceonly.spi.HolderResult.NOT_HOLDER, store.complete(other, "t1", "fp", Duration.ofHours(1)));
            }
        }
    }

    /**
     * A claim by script whose reply was lost with its connection, after Redis took the key: the retry
     * finds the key held by its own token and answers the fence the first attempt wrote, not none
     * (the handler would then run without its fence) and not a new one.
     */
    @Test
    void aScriptClaimWhoseReplyWasLostAnswersTheFenceItGot() throws Exception {
        try (dev.onceonly.testing.PrivateRedis server = new dev.onceonly.testing.PrivateRedis();
             dev.onceonly.testing.TcpProxy proxy = new dev.onceonly.testing.TcpProxy(server.port());
             RedisClient ownAdmin = server.client()) {
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, List.of("127.0.0.1:" + proxy.port()),
                    "", false, null, null, 0, Duration.ofSeconds(2), Duration.ofSeconds(2), 4);
            try (RedisClaimStore store = new RedisClaimStore(RedisConnection.client(settings), RedisSettings.NativeClaim.OFF)) {
                store.claim(prefix + "warm", "t0", "fp", Duration.ofSeconds(30)); // the script loaded: the lost reply is the claim's
                String key = prefix + "lost-claim";
                proxy.dropNextReply();
                ClaimResult r = store.claim(key, "t1", "fp", Duration.ofSeconds(30));
                assertEquals(ClaimState.ACQUIRED, r.state());
                assertTrue(r.fence() > 0, "the fence " + r.fence());
                assertEquals("Pt1|fp|" + r.fence(), ownAdmin.get(key), "the first attempt's claim, with the fence answered");
            }
        }
    }

    /**
     * A batch is the single calls' commands, one per key, in one round trip: claimAll of 16 fresh
     * keys is 16 commands, completeAll of them 16 scripts and, with wait-replicas, ONE WAIT after
     * them; an empty batch sends nothing. Counted on the wire by a proxy in front of a Redis of the test's own. On
     * that server, with no replica, WAIT answers 0 after its timeout: every applied completion of the
     * batch is counted unconfirmed (and only those), and the batch waited once, not once per key.
     */
    @Test
    void aBatchIsOneCommandPerKeyAndOneWaitInOneRoundTrip() throws Exception {
        try (PrivateRedis own = new PrivateRedis(); RespProxy wire = new RespProxy(own.port(), false);
             RedisClaimStore waiting = new RedisClaimStore(RedisClient.create(new HostAndPort("127.0.0.1", wire.port())),
                     Duration.ZERO, 1, Duration.ofMillis(300), RedisSettings.NativeClaim.AUTO)) {
            waiting.claim("warm", "t0", "", Duration.ofSeconds(5)); // connection open, scripts cached
            waiting.complete("warm", "t0", "", Duration.ofSeconds(5));
            long unconfirmedBefore = waiting.unconfirmedCompletions();

            int before = wire.commands();
            assertEquals(List.of(), waiting.claimAll(List.of()));
            assertEquals(List.of(), waiting.completeAll(List.of()));
            assertEquals(0, wire.commands() - before, "an empty batch sends nothing");

            List<ClaimRequest> claims = new ArrayList<>();
            List<CompleteRequest> completions = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                claims.add(new ClaimRequest("k" + i, "t" + i, "fp", Duration.ofSeconds(30)));
                // Every fourth completion comes with a token that does not hold its key.
                completions.add(new CompleteRequest("k" + i, i % 4 == 3 ? "intruder" : "t" + i, "fp", Duration.ofSeconds(60)));
            }
            before = wire.commands();
            int roundTrips = wire.roundTrips();
            assertEquals(java.util.Collections.nCopies(16, ClaimResult.ACQUIRED), Fences.unfenced(waiting.claimAll(claims)));
            assertEquals(16, wire.commands() - before, "claimAll of 16: one SET each");
            assertEquals(1, wire.roundTrips() - roundTrips, "claimAll of 16: one round trip");

            before = wire.commands();
            roundTrips = wire.roundTrips();
            long start = System.nanoTime();
            List<HolderResult> results = waiting.completeAll(completions);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertEquals(17, wire.commands() - before, "completeAll of 16: one script each and one WAIT");
            assertEquals(1, wire.roundTrips() - roundTrips, "completeAll of 16: one round trip");
            assertEquals(12, results.stream().filter(r -> r == HolderResult.APPLIED).count(), results.toString());
            assertEquals(12, waiting.unconfirmedCompletions() - unconfirmedBefore, "each applied completion is unconfirmed, no other");
            assertTrue(took.compareTo(Duration.ofMillis(900)) < 0, "one WAIT of 300 ms for the batch, took " + took.toMillis() + " ms");
        }
    }

    /**
     * Completions sent with claims ({@code completeThenClaim}) are the same commands in ONE round
     * trip, completions first, when no key comes twice; a key both completed and claimed takes two
     * (completions, then claims), so its claim still finds it done. With wait-replicas the store does
     * not offer it (WAIT would hold the claims' replies) and the call is completeAll and then
     * claimAll: two round trips, the claims after the wait. Counted on the wire by a proxy.
     */
    @Test
    void completionsWithClaimsAreOneRoundTripCompletionsFirst() throws Exception {
        try (PrivateRedis own = new PrivateRedis(); RespProxy wire = new RespProxy(own.port(), false);
             RedisClaimStore plain = new RedisClaimStore(RedisClient.create(new HostAndPort("127.0.0.1", wire.port())));
             RedisClaimStore waiting = new RedisClaimStore(RedisClient.create(new HostAndPort("127.0.0.1", wire.port())),
                     Duration.ZERO, 1, Duration.ofMillis(100), RedisSettings.NativeClaim.AUTO)) {
            assertTrue(plain.completesWithClaims());
            assertFalse(waiting.completesWithClaims(), "WAIT would hold up the claims");
            for (RedisClaimStore s : List.of(plain, waiting)) {
                s.claim("warm", "t0", "", Duration.ofSeconds(5)); // connection open, scripts cached
                s.complete("warm", "t0", "", Duration.ofSeconds(5));
            }
            plain.claim("a", "t1", "fp1", Duration.ofSeconds(30));
            plain.claim("b", "t2", "fp2", Duration.ofSeconds(30));

            int before = wire.commands();
            int roundTrips = wire.roundTrips();
            BatchClaimStore.Answers answers = plain.completeThenClaim(
                    List.of(new CompleteRequest("a", "t1", "fp1", Duration.ofSeconds(60)),
                            new CompleteRequest("b", "intruder", "fp2", Duration.ofSeconds(60))),
                    List.of(new ClaimRequest("c", "t3", "fp3", Duration.ofSeconds(30)),
                            new ClaimRequest("d", "t4", "fp4", Duration.ofSeconds(30))));
            assertEquals(List.of(HolderResult.APPLIED, HolderResult.NOT_HOLDER), answers.completions());
            assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.ACQUIRED), Fences.unfenced(answers.claims()));
            assertEquals(4, wire.commands() - before, "two scripts and two SETs");
            assertEquals(1, wire.roundTrips() - roundTrips, "in one round trip");

            roundTrips = wire.roundTrips();
            answers = plain.completeThenClaim(List.of(new CompleteRequest("c", "t3", "fp3", Duration.ofSeconds(60))),
                    List.of(new ClaimRequest("c", "t5", "fp3", Duration.ofSeconds(30))));
            assertEquals(List.of(HolderResult.APPLIED), answers.completions());
            assertEquals(List.of(ClaimResult.done("fp3")), answers.claims(), "the claim comes after the completion");
            assertEquals(2, wire.roundTrips() - roundTrips, "a key in both: completions, then claims");

            waiting.claim("e", "t6", "fp6", Duration.ofSeconds(30));
            roundTrips = wire.roundTrips();
            answers = waiting.completeThenClaim(List.of(new CompleteRequest("e", "t6", "fp6", Duration.ofSeconds(60))),
                    List.of(new ClaimRequest("f", "t7", "fp7", Duration.ofSeconds(30))));
            assertEquals(List.of(HolderResult.APPLIED), answers.completions());
            assertEquals(List.of(ClaimResult.ACQUIRED), Fences.unfenced(answers.claims()));
            assertEquals(2, wire.roundTrips() - roundTrips, "with WAIT: completeAll, then claimAll");
            assertEquals("Dfp1", own.client().get("a"));
        }
    }

    /**
     * A batch on a server that has none of the scripts (a new or restarted Redis): every EVALSHA of
     * the pipeline is refused with NOSCRIPT, and each key's command is then run by source on its own;
     * the answers are those of a warm server.
     */
    @Test
    void aBatchOnAServerWithoutTheScriptsLoadsThemAndAnswersEachKey() throws Exception {
        try (PrivateRedis own = new PrivateRedis(); RedisClient ownAdmin = own.client();
             RedisClaimStore scriptStore = new RedisClaimStore(own.client(), RedisSettings.NativeClaim.OFF)) {
            ownAdmin.psetex("taken", 30_000, "Pthem|fp-them");
            List<ClaimResult> claimed = scriptStore.claimAll(List.of(
                    new ClaimRequest("a", "t1", "fp1", Duration.ofSeconds(30)),
                    new ClaimRequest("taken", "t2", "fp2", Duration.ofSeconds(30)),
                    new ClaimRequest("b", "t3", "fp3", Duration.ofSeconds(30))));
            assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.inProgress("fp-them"), ClaimResult.ACQUIRED), Fences.unfenced(claimed));

            ownAdmin.scriptFlush();
            List<HolderResult> completed = scriptStore.completeAll(List.of(
                    new CompleteRequest("a", "t1", "fp1", Duration.ofSeconds(60)),
                    new CompleteRequest("taken", "t2", "fp2", Duration.ofSeconds(60)),
                    new CompleteRequest("b", "t3", "", Duration.ofSeconds(60))));
            assertEquals(List.of(HolderResult.APPLIED, HolderResult.NOT_HOLDER, HolderResult.APPLIED), completed);
            assertEquals("Dfp1", ownAdmin.get("a"));
            assertEquals("Pthem|fp-them", ownAdmin.get("taken"));
            assertEquals("1", ownAdmin.get("b"));

            scriptStore.claim("c", "t4", "fp4", Duration.ofSeconds(30));
            ownAdmin.scriptFlush();
            BatchClaimStore.Answers answers = scriptStore.completeThenClaim(
                    List.of(new CompleteRequest("c", "t4", "fp4", Duration.ofSeconds(60))),
                    List.of(new ClaimRequest("d", "t5", "fp5", Duration.ofSeconds(30)),
                            new ClaimRequest("taken", "t5", "fp5", Duration.ofSeconds(30))));
            assertEquals(List.of(HolderResult.APPLIED), answers.completions());
            assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.inProgress("fp-them")), Fences.unfenced(answers.claims()));
            assertEquals("Dfp4", ownAdmin.get("c"));
            assertEquals("Pt5|fp5|" + answers.claims().get(0).fence(), ownAdmin.get("d"), "the claim script's value, with its fence");
        }
    }

    /**
     * A batch whose replies were lost with their connection, after Redis applied its commands: the
     * round is sent again on another connection, and each key answers as if the first reply had
     * arrived (the claims recognise their own token; the completions find the key done with their
     * own value). Someone else's key is still not the batch's.
     */
    @Test
    void aBatchWhoseRepliesWereLostIsStillAppliedOnce() throws Exception {
        try (PrivateRedis server = new PrivateRedis();
             dev.onceonly.testing.TcpProxy proxy = new dev.onceonly.testing.TcpProxy(server.port());
             RedisClient ownAdmin = server.client()) {
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, List.of("127.0.0.1:" + proxy.port()),
                    "", false, null, null, 0, Duration.ofSeconds(2), Duration.ofSeconds(2), 4);
            try (RedisClaimStore store = new RedisClaimStore(RedisConnection.client(settings))) {
                // Every script loaded first: the lost replies must be the commands' own, not NOSCRIPT.
                store.claim("warm", "t0", "fp", Duration.ofSeconds(30));
                store.complete("warm", "t0", "fp", Duration.ofSeconds(30));
                ownAdmin.psetex("other", 30_000, "Pthem|fp-them");

                proxy.dropNextReply();
                assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.inProgress("fp-them"), ClaimResult.ACQUIRED),
                        store.claimAll(List.of(
                                new ClaimRequest("a", "t1", "fp1", Duration.ofSeconds(30)),
                                new ClaimRequest("other", "t1", "fp1", Duration.ofSeconds(30)),
                                new ClaimRequest("b", "t2", "fp2", Duration.ofSeconds(30)))));
                assertEquals("Pt1|fp1", ownAdmin.get("a"));
                assertEquals("Pt2|fp2", ownAdmin.get("b"));

                proxy.dropNextReply();
                assertEquals(List.of(HolderResult.APPLIED, HolderResult.NOT_HOLDER, HolderResult.APPLIED),
                        store.completeAll(List.of(
                                new CompleteRequest("a", "t1", "fp1", Duration.ofHours(1)),
                                new CompleteRequest("other", "t1", "fp1", Duration.ofHours(1)),
                                new CompleteRequest("b", "t2", "fp2", Duration.ofHours(1)))));
                assertEquals("Dfp1", ownAdmin.get("a"));
                assertEquals("Pthem|fp-them", ownAdmin.get("other"));

                store.claim("c", "t3", "fp3", Duration.ofSeconds(30));
                proxy.dropNextReply();
                BatchClaimStore.Answers answers = store.completeThenClaim(
                        List.of(new CompleteRequest("c", "t3", "fp3", Duration.ofHours(1))),
                        List.of(new ClaimRequest("d", "t4", "fp4", Duration.ofSeconds(30)),
                                new ClaimRequest("other", "t4", "fp4", Duration.ofSeconds(30))));
                assertEquals(List.of(HolderResult.APPLIED), answers.completions(), "found done with its own value");
                assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.inProgress("fp-them")), Fences.unfenced(answers.claims()));
                assertEquals("Dfp3", ownAdmin.get("c"));
                assertEquals("Pt4|fp4", ownAdmin.get("d"));
            }
        }
    }
}
