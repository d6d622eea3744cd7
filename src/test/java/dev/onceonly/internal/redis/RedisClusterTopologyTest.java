package dev.onceonly.internal.redis;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.contract.Fences;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.RedisTopology;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Cluster mode on a real Redis Cluster on loopback: three masters with one replica each, six
 * processes, shared by the tests of this class in order (the fail-overs come last, the kill -9
 * very last). Every test checks its effect on the nodes themselves (slot owners, script caches,
 * roles), and the load tests print what they saw ({@code [redis-topology]} lines).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisClusterTopologyTest {

    /** A master that stops answering is failed over after this; long enough for the pause test to stay below it. */
    static final int NODE_TIMEOUT_MILLIS = 3000;
    static final Duration SOCKET_TIMEOUT = Duration.ofMillis(500);

    RedisTopology cluster;

    @BeforeAll
    void start() throws Exception {
        cluster = RedisTopology.cluster(NODE_TIMEOUT_MILLIS);
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private RedisSettings settings() {
        return new RedisSettings(RedisSettings.Mode.CLUSTER, cluster.nodes().stream().map(RedisTopology.Node::address).toList(),
                "", false, null, null, 0, Duration.ofSeconds(1), SOCKET_TIMEOUT, 8);
    }

    /** Slot → port of the master serving it now, from CLUSTER NODES of a live node. */
    private int[] slotOwners() {
        for (RedisTopology.Node n : cluster.nodes()) {
            if (!n.alive()) {
                continue;
            }
            try (Jedis j = n.client()) {
                int[] owners = new int[16384];
                for (String line : j.clusterNodes().split("\n")) {
                    String[] f = line.trim().split(" ");
                    if (f.length < 9 || !f[2].contains("master") || f[2].contains("fail")) {
                        continue;
                    }
                    int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1, f[1].indexOf('@')));
                    for (int i = 8; i < f.length; i++) {
                        if (f[i].startsWith("[")) {
                            continue; // a slot being migrated or imported
                        }
                        String[] range = f[i].split("-");
                        int from = Integer.parseInt(range[0]);
                        int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
                        for (int s = from; s <= to; s++) {
                            owners[s] = port;
                        }
                    }
                }
                return owners;
            } catch (RuntimeException e) {
                // ask another node
            }
        }
        throw new IllegalStateException("no cluster node answers");
    }

    private List<Integer> masterPorts() {
        return java.util.Arrays.stream(slotOwners()).distinct().boxed().toList();
    }

    private static int slot(String key) {
        return redis.clients.jedis.util.JedisClusterCRC16.getSlot(key);
    }

    /**
     * The WAIT path sends the script on a connection of its own to the key's master, so it follows
     * ASK (a slot being migrated: ASKING, then the script, on the target) and MOVED (a slot that
     * moved since the store last looked) itself. First test: the slot is still empty.
     */
    @Test
    @Order(0)
    void completionsWithWaitFollowAskAndMoved() {
        List<Integer> masters = masterPorts();
        int source = masters.get(0);
        int target = masters.get(1);
        String prefix = "oo:redirect:" + UUID.randomUUID() + ":";
        int[] owners = slotOwners();
        String asked = null;
        for (int i = 0; asked == null; i++) {
            if (owners[slot(prefix + i)] == source) {
                asked = prefix + i;
            }
        }
        int slot = slot(asked);
        String moved = null;
        for (int i = 0; moved == null; i++) {
            if (slot(prefix + "m" + i) == slot) {
                moved = prefix + "m" + i;
            }
        }
        try (RedisClaimStore plain = RedisClaimStore.connect(settings());
             RedisClaimStore waiting = RedisClaimStore.connect(settings().withWait(1, Duration.ofMillis(200)));
             Jedis src = cluster.node(source).client(); Jedis dst = cluster.node(target).client()) {
            // Both stores know the slot at its source.
            plain.claim(prefix + "warm", "t", "fp", ClaimLoad.LEASE);
            waiting.claim(prefix + "warm", "t", "fp", ClaimLoad.LEASE);
            dst.clusterSetSlotImporting(slot, src.clusterMyId());
            src.clusterSetSlotMigrating(slot, dst.clusterMyId());
            try {
                redirected(plain, waiting, src, dst, masters, slot, asked, moved);
            } finally {
                // Never leave the slot open: the later tests reshard.
                for (int port : masters) {
                    try (Jedis j = cluster.node(port).client()) {
                        j.clusterSetSlotNode(slot, dst.clusterMyId());
                    }
                }
            }
        }
    }

    private void redirected(RedisClaimStore plain, RedisClaimStore waiting, Jedis src, Jedis dst, List<Integer> masters,
                            int slot, String asked, String moved) {
        {
            // A new key of a migrating slot is created on the target (ASK).
            assertEquals(ClaimState.ACQUIRED, plain.claim(asked, "t", "fp", ClaimLoad.LEASE).state());
            assertThrows(redis.clients.jedis.exceptions.JedisAskDataException.class, () -> src.get(asked),
                    "the key is not on the source");
            ReplicaWait.Completion afterAsk = waiting.completeReplicated(asked, "t", "fp", ClaimLoad.RETENTION);
            assertEquals(HolderResult.APPLIED, afterAsk.result());
            assertTrue(afterAsk.confirmed(), "WAIT ran on the target, after the write: " + afterAsk);
            dst.sendCommand(redis.clients.jedis.Protocol.Command.ASKING);
            assertEquals("Dfp", dst.get(asked));

            // The slot moves for good; the waiting store has not heard of it.
            for (int port : masters) {
                try (Jedis j = cluster.node(port).client()) {
                    j.clusterSetSlotNode(slot, dst.clusterMyId());
                }
            }
            assertEquals(ClaimState.ACQUIRED, plain.claim(moved, "t", "fp", ClaimLoad.LEASE).state());
            ReplicaWait.Completion afterMoved = waiting.completeReplicated(moved, "t", "fp", ClaimLoad.RETENTION);
            assertEquals(HolderResult.APPLIED, afterMoved.result());
            assertTrue(afterMoved.confirmed(), "WAIT ran on the new owner, after the write: " + afterMoved);
            assertEquals("Dfp", dst.get(moved));
            assertEquals(ClaimResult.done("fp"), waiting.claim(asked, "t2", "fp", ClaimLoad.LEASE));
        }
    }

    @Test
    @Order(1)
    void completedKeysSpreadOverAllThreeMastersAndLiveOnTheSlotsOwner() {
        Map<Integer, Integer> perMaster = new HashMap<>();
        int[] owners = slotOwners();
        String prefix = "oo:spread:" + UUID.randomUUID() + ":";
        try (RedisClaimStore store = RedisClaimStore.connect(settings())) {
            for (int i = 0; i < 300; i++) {
                String key = prefix + i;
                assertEquals(ClaimState.ACQUIRED, store.claim(key, "t", "fp", ClaimLoad.LEASE).state());
                assertEquals(HolderResult.APPLIED, store.complete(key, "t", "fp", ClaimLoad.RETENTION));
                int owner = owners[slot(key)];
                try (Jedis direct = cluster.node(owner).client()) {
                    assertEquals(slot(key), direct.clusterKeySlot(key));
                    assertEquals("Dfp", direct.get(key), "the key is done on the master owning its slot");
                }
                perMaster.merge(owner, 1, Integer::sum);
            }
            // A batch over all three masters is the per-key calls there: each key done on its owner.
            List<BatchClaimStore.ClaimRequest> claims = new java.util.ArrayList<>();
            List<BatchClaimStore.CompleteRequest> completions = new java.util.ArrayList<>();
            for (int i = 0; i < 60; i++) {
                claims.add(new BatchClaimStore.ClaimRequest(prefix + "batch:" + i, "t" + i, "fp" + i, ClaimLoad.LEASE));
                completions.add(new BatchClaimStore.CompleteRequest(prefix + "batch:" + i, "t" + i, "fp" + i, ClaimLoad.RETENTION));
            }
            assertEquals(java.util.Collections.nCopies(60, ClaimResult.ACQUIRED), Fences.unfenced(store.claimAll(claims)));
            assertEquals(java.util.Collections.nCopies(60, HolderResult.APPLIED), store.completeAll(completions));
            for (int i = 0; i < 60; i++) {
                String key = prefix + "batch:" + i;
                try (Jedis direct = cluster.node(owners[slot(key)]).client()) {
                    assertEquals("Dfp" + i, direct.get(key), "the batch's key is done on the master owning its slot");
                }
            }
        }
        System.out.println("[redis-topology] cluster: 300 completed keys per master port: " + perMaster);
        assertEquals(3, perMaster.size(), "every master holds some: " + perMaster);
        perMaster.values().forEach(n -> assertTrue(n > 50, "roughly a third each: " + perMaster));
    }

    @Test
    @Order(2)
    void scriptsAreLoadedAgainOnANodeWhoseCacheWasFlushed() {
        String prefix = "oo:flush:" + UUID.randomUUID() + ":";
        int flushed = masterPorts().get(0);
        // The plain store claims by script (native-claim=off, as on Redis before 7.0), the waiting one
        // natively: both claim paths meet the flushed node.
        try (RedisClaimStore plain = RedisClaimStore.connect(settings().withNativeClaim(RedisSettings.NativeClaim.OFF));
             RedisClaimStore waiting = RedisClaimStore.connect(settings().withWait(1, Duration.ofMillis(200)))) {
            for (RedisClaimStore store : List.of(plain, waiting)) {
                // Scripts cached everywhere first, then one node forgets them.
                for (int i = 0; i < 30; i++) {
                    store.claim(prefix + "warm:" + i, "t", "fp", ClaimLoad.LEASE);
                }
                try (Jedis j = cluster.node(flushed).client()) {
                    j.scriptFlush();
                    assertEquals(false, j.scriptExists(sha(ClaimScripts.CLAIM)));
                }
                int onFlushed = 0;
                for (int i = 0; i < 60; i++) {
                    String key = prefix + (store == plain ? "plain:" : "wait:") + i;
                    assertEquals(ClaimState.ACQUIRED, store.claim(key, "t", "fp", ClaimLoad.LEASE).state());
                    ReplicaWait.Completion c = store.completeReplicated(key, "t", "fp", ClaimLoad.RETENTION);
                    assertEquals(HolderResult.APPLIED, c.result());
                    // WAIT answered (a count, not -1) after the reload too; whether the replica made it
                    // within 200 ms on a busy machine is not this test's business.
                    assertEquals(store == waiting, c.replicas() >= 0, "WAIT ran after the reload too: " + c);
                    onFlushed += slotOwners()[slot(key)] == flushed ? 1 : 0;
                }
                assertTrue(onFlushed > 0, "some keys were on the flushed node");
                try (Jedis j = cluster.node(flushed).client()) {
                    // A native claim needs no script: only the completion's is loaded again.
                    assertEquals(List.of(store == plain, true), j.scriptExists(sha(ClaimScripts.CLAIM), sha(ClaimScripts.COMPLETE)));
                }
            }
        }
    }

    private static String sha(String script) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-1")
                    .digest(script.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A frozen master (SIGSTOP, shorter than the node timeout: no fail-over) costs the calls on its
     * own keys one socket timeout each, and must not slow the calls on the other masters' keys.
     */
    @Test
    @Order(3)
    void aFrozenMasterDoesNotDelayRenewalsOnTheOtherMasters() throws Exception {
        int[] owners = slotOwners();
        int frozen = masterPorts().get(1);
        String prefix = "oo:frozen:" + UUID.randomUUID() + ":";
        List<String> frozenKeys = new ArrayList<>();
        List<String> otherKeys = new ArrayList<>();
        try (RedisClaimStore store = RedisClaimStore.connect(settings())) {
            for (int i = 0; frozenKeys.size() < 4 || otherKeys.size() < 40; i++) {
                String key = prefix + i;
                List<String> to = owners[slot(key)] == frozen ? frozenKeys : otherKeys;
                if (to.size() < (to == frozenKeys ? 4 : 40)) {
                    store.claim(key, "t", "fp", ClaimLoad.LEASE);
                    to.add(key);
                }
            }
            // Separate threads for each side, as a renewal sweep has one task per lease.
            ExecutorService pool = Executors.newFixedThreadPool(4);
            ExecutorService otherPool = Executors.newFixedThreadPool(4);
            RedisTopology.Node node = cluster.node(frozen);
            long worstOther = 0;
            long otherFailures = 0;
            long frozenMillis;
            try {
                cluster.pause(node);
                long pausedAt = System.nanoTime();
                List<Future<Long>> onFrozen = new ArrayList<>();
                for (String k : frozenKeys) {
                    onFrozen.add(pool.submit(() -> timed(() -> store.extend(k, "t", ClaimLoad.LEASE))));
                }
                // Renewals of the other masters' keys while the calls on the frozen one wait.
                Thread.sleep(50);
                List<Future<Long>> others = new ArrayList<>();
                for (String k : otherKeys) {
                    others.add(otherPool.submit(() -> timed(() -> store.extend(k, "t", ClaimLoad.LEASE))));
                }
                for (Future<Long> f : others) {
                    long t = f.get(10, TimeUnit.SECONDS);
                    if (t < 0) {
                        otherFailures++;
                    }
                    worstOther = Math.max(worstOther, Math.abs(t));
                }
                frozenMillis = 0;
                for (Future<Long> f : onFrozen) {
                    frozenMillis = Math.max(frozenMillis, Math.abs(f.get(10, TimeUnit.SECONDS)));
                }
                assertTrue(System.nanoTime() - pausedAt < TimeUnit.MILLISECONDS.toNanos(NODE_TIMEOUT_MILLIS),
                        "measured within the node timeout, no fail-over");
            } finally {
                cluster.resume(node);
                pool.shutdownNow();
                otherPool.shutdownNow();
            }
            System.out.printf("[redis-topology] cluster frozen master: %d extends on its keys took up to %d ms (socket timeout %d ms); "
                            + "%d extends on the other masters' keys meanwhile took up to %d ms, %d failed%n",
                    frozenKeys.size(), frozenMillis, SOCKET_TIMEOUT.toMillis(), otherKeys.size(), worstOther, otherFailures);
            assertEquals(0, otherFailures, "no call on another master's key failed");
            assertTrue(worstOther < SOCKET_TIMEOUT.toMillis(), "the other masters' keys were not held up: " + worstOther + " ms");
            assertTrue(frozenMillis >= SOCKET_TIMEOUT.toMillis() - 50, "the frozen master's keys waited for the timeout");
            // Thawed: its keys answer again, still held by their claimant.
            for (String k : frozenKeys) {
                assertEquals(HolderResult.APPLIED, store.extend(k, "t", ClaimLoad.LEASE));
            }
        }
    }

    /** Milliseconds the call took; negative when it failed with {@link ClaimStoreException}. */
    private static long timed(Runnable call) {
        long start = System.nanoTime();
        try {
            call.run();
            return Math.max(1, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        } catch (ClaimStoreException e) {
            return -Math.max(1, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
    }

    @Test
    @Order(4)
    void aReshardDuringLoadLosesNoCompletedKey() throws Exception {
        List<Integer> masters = masterPorts();
        String from = nodeId(masters.get(0));
        String to = nodeId(masters.get(1));
        Report r = underLoad("cluster reshard 1000 slots", () -> RedisTopology.cli(List.of("redis-cli", "--cluster", "reshard",
                "127.0.0.1:" + masters.get(2), "--cluster-from", from, "--cluster-to", to, "--cluster-slots", "1000",
                "--cluster-yes")));
        cluster.awaitClusterOk();
        for (ClaimLoad.Report each : List.of(r.plain, r.waiting)) {
            assertEquals(0, each.windowHits(), "every completed key is still done after the reshard: " + each);
            assertEquals(0, each.duplicatesAdmitted());
            assertTrue(each.failed() <= 20, "MOVED and ASK are followed; at most a few failures: " + each);
        }
    }

    @Test
    @Order(5)
    void aManualFailoverDuringLoadIsRiddenOut() throws Exception {
        int master = masterPorts().get(2);
        RedisTopology.Node replica = replicaOf(master);
        Report r = underLoad("cluster CLUSTER FAILOVER", () -> {
            try (Jedis j = replica.client()) {
                j.clusterFailover();
            }
            Eventually.await("replica " + replica.port() + " serving", Duration.ofSeconds(30), this::masterPorts,
                    m -> m.contains(replica.port()));
        });
        for (ClaimLoad.Report each : List.of(r.plain, r.waiting)) {
            assertRecovered(each);
            // A manual fail-over waits for the replica to catch up with the paused master: nothing lost.
            assertEquals(0, each.windowHits(), "nothing lost in a manual fail-over: " + each);
        }
    }

    @Test
    @Order(6)
    void aKilledMasterIsFailedOverAndRiddenOut() throws Exception {
        int master = masterPorts().get(0);
        RedisTopology.Node replica = replicaOf(master);
        RedisClaimStore health = RedisClaimStore.connect(settings());
        Report r;
        try {
            assertEquals(java.util.Optional.empty(), health.problem());
            assertTrue(health.topology().startsWith("cluster, nodes known: ") && health.topology().contains("127.0.0.1:" + master),
                    health.topology());
            r = underLoad("cluster kill -9 master", () -> {
                cluster.kill9(cluster.node(master));
                // Readiness names the master that is down while its slots have no one to serve them.
                String problem = health.problem().orElseThrow();
                assertTrue(problem.startsWith("cluster master(s) not answering PING: 127.0.0.1:" + master + " ("), problem);
                Eventually.await("replica " + replica.port() + " promoted", Duration.ofSeconds(60), this::masterPorts,
                        m -> m.contains(replica.port()) && !m.contains(master));
            });
            // The dead node serves no slot any more: ready again, though it is still gone.
            Eventually.await("ready again", Duration.ofSeconds(30), health::problem, java.util.Optional::isEmpty);
        } finally {
            health.close();
        }
        assertRecovered(r.plain);
        assertRecovered(r.waiting);
        assertEquals(0, r.waiting.confirmedWindowHits(), "a completion the replica acknowledged is never lost");
    }

    static void assertRecovered(ClaimLoad.Report r) {
        RedisSentinelFailoverTest.assertRecovered(r);
    }

    private String nodeId(int port) {
        try (Jedis j = cluster.node(port).client()) {
            return j.clusterMyId();
        }
    }

    private RedisTopology.Node replicaOf(int masterPort) {
        String id = nodeId(masterPort);
        return cluster.nodes().stream().filter(RedisTopology.Node::alive).filter(n -> {
            try (Jedis j = n.client()) {
                return j.clusterNodes().lines().anyMatch(l -> l.contains("myself") && l.contains("slave " + id));
            }
        }).findFirst().orElseThrow();
    }

    record Report(ClaimLoad.Report plain, ClaimLoad.Report waiting) {
    }

    /** Two stores side by side through the fault, one without WAIT and one with WAIT 1 200ms. */
    private Report underLoad(String what, RedisSentinelFailoverTest.Fault fault) throws Exception {
        // The plain store claims by script (native-claim=off, as on Redis before 7.0), the waiting one
        // natively: both claim paths meet the flushed node.
        try (RedisClaimStore plain = RedisClaimStore.connect(settings().withNativeClaim(RedisSettings.NativeClaim.OFF));
             RedisClaimStore waiting = RedisClaimStore.connect(settings().withWait(1, Duration.ofMillis(200)))) {
            String run = UUID.randomUUID().toString();
            ClaimLoad plainLoad = new ClaimLoad(plain, "oo:load:" + run + ":plain:", 2);
            ClaimLoad waitLoad = new ClaimLoad(waiting, "oo:load:" + run + ":wait:", 2);
            try {
                Thread.sleep(1000);
                plainLoad.fault();
                waitLoad.fault();
                fault.inject();
                Thread.sleep(RedisSentinelFailoverTest.AFTER_FAULT.toMillis());
            } finally {
                plainLoad.close();
                waitLoad.close();
            }
            return new Report(plainLoad.report().print(what + ", no WAIT"), waitLoad.report().print(what + ", WAIT 1 200ms"));
        }
    }
}
