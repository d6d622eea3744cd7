package dev.onceonly.internal.redis;

import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.RedisTopology;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The long version of the Sentinel and Cluster fail-over tests, for bench/run-redis-failover.sh
 * (not part of the build: the class name does not end in Test). Guarded claims run for
 * {@code -Donceonly.soak.seconds} (default 60) from two stores (without WAIT, with WAIT 1 200ms)
 * while faults come one after another every {@code -Donceonly.soak.every} seconds (default 12):
 * Sentinel alternates SENTINEL FAILOVER and kill -9 of the master (restarted, to rejoin as a
 * replica); Cluster cycles CLUSTER FAILOVER, kill -9 of a master (restarted) and a reshard of 500
 * slots. Prints one line per fault and the totals ({@code [redis-soak]}).
 */
class RedisFailoverSoak {

    static final long SECONDS = Long.getLong("onceonly.soak.seconds", 60);
    static final long EVERY = Long.getLong("onceonly.soak.every", 12);

    interface Fault {
        String inject(int round) throws Exception;
    }

    @Test
    void sentinel() throws Exception {
        try (RedisTopology group = RedisTopology.sentinel(1000)) {
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.SENTINEL, group.sentinelAddresses(), "m", false, null,
                    null, 0, Duration.ofSeconds(1), Duration.ofSeconds(1), 8);
            soak("sentinel", settings, round -> {
                int before = group.sentinelMasterPort();
                String what;
                RedisTopology.Node killed = null;
                if (round % 2 == 0) {
                    try (Jedis s = group.sentinels().get(round % 3).client()) {
                        s.sentinelFailover("m");
                    }
                    what = "SENTINEL FAILOVER";
                } else {
                    killed = group.node(before);
                    group.kill9(killed);
                    what = "kill -9 master " + before;
                }
                Eventually.await("a new master", Duration.ofSeconds(30), group::sentinelMasterPort, p -> p != before);
                if (killed != null) {
                    group.restart(killed);
                }
                // The old master follows the new one before the next fault (else the next has no replica to promote).
                Eventually.await("two data nodes in sync", Duration.ofSeconds(60), () -> {
                    try (Jedis j = group.node(group.sentinelMasterPort()).client()) {
                        return j.info("replication");
                    } catch (RuntimeException e) {
                        return "";
                    }
                }, info -> info.contains("connected_slaves:1") && info.contains("state=online"));
                return what;
            });
        }
    }

    @Test
    void cluster() throws Exception {
        try (RedisTopology cluster = RedisTopology.cluster(3000)) {
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.CLUSTER,
                    cluster.nodes().stream().map(RedisTopology.Node::address).toList(), "", false, null, null, 0,
                    Duration.ofSeconds(1), Duration.ofMillis(500), 8);
            soak("cluster", settings, round -> {
                List<String> lines;
                try (Jedis j = cluster.nodes().stream().filter(RedisTopology.Node::alive).findFirst().orElseThrow().client()) {
                    lines = j.clusterNodes().lines().toList();
                }
                List<String[]> masters = lines.stream().map(l -> l.split(" "))
                        .filter(f -> f[2].contains("master") && !f[2].contains("fail") && f.length > 8).toList();
                String[] master = masters.get(round % masters.size());
                int masterPort = port(master[1]);
                String what;
                switch (round % 3) {
                    case 0 -> {
                        String[] replica = lines.stream().map(l -> l.split(" "))
                                .filter(f -> f[3].equals(master[0]) && !f[2].contains("fail")).findFirst().orElseThrow();
                        try (Jedis j = cluster.node(port(replica[1])).client()) {
                            j.clusterFailover();
                        }
                        // CLUSTER FAILOVER answers at once and switches afterwards.
                        Eventually.await("replica " + port(replica[1]) + " promoted", Duration.ofSeconds(30), () -> {
                            try (Jedis j = cluster.node(port(replica[1])).client()) {
                                return j.clusterNodes();
                            }
                        }, nodes -> nodes.lines().anyMatch(l -> l.contains("myself,master")));
                        what = "CLUSTER FAILOVER to " + port(replica[1]);
                    }
                    case 1 -> {
                        RedisTopology.Node node = cluster.node(masterPort);
                        cluster.kill9(node);
                        Eventually.await("a replica promoted", Duration.ofSeconds(60), () -> {
                            try (Jedis j = cluster.nodes().stream().filter(RedisTopology.Node::alive).findFirst().orElseThrow().client()) {
                                return j.clusterNodes();
                            }
                        }, nodes -> nodes.lines().anyMatch(l -> l.startsWith(master[0]) && l.contains(",fail "))
                                && nodes.lines().filter(l -> l.contains("master") && !l.contains("fail")
                                && l.split(" ").length > 8).count() == 3);
                        // Only now: a master without persistence restarted before its replica took
                        // over comes back empty and keeps its slots, and every key of them is gone.
                        cluster.restart(node);
                        what = "kill -9 master " + masterPort + " (restarted)";
                    }
                    default -> {
                        String[] to = masters.get((round + 1) % masters.size());
                        RedisTopology.cli(List.of("redis-cli", "--cluster", "reshard", "127.0.0.1:" + masterPort,
                                "--cluster-from", master[0], "--cluster-to", to[0], "--cluster-slots", "500", "--cluster-yes"));
                        what = "reshard 500 slots " + masterPort + " -> " + port(to[1]);
                    }
                }
                cluster.awaitClusterOk();
                if (Boolean.getBoolean("onceonly.soak.debug")) {
                    // Who serves what after each fault, when a run needs explaining.
                    try (Jedis j = cluster.nodes().stream().filter(RedisTopology.Node::alive).findFirst().orElseThrow().client()) {
                        System.out.println("NODES after " + what + "\n" + j.clusterNodes());
                    }
                }
                return what;
            });
        }
    }

    private static int port(String address) {
        return Integer.parseInt(address.substring(address.indexOf(':') + 1, address.contains("@") ? address.indexOf('@') : address.length()));
    }

    private void soak(String name, RedisSettings settings, Fault fault) throws Exception {
        try (RedisClaimStore plain = RedisClaimStore.connect(settings);
             RedisClaimStore waiting = RedisClaimStore.connect(settings.withWait(1, Duration.ofMillis(200)))) {
            String run = UUID.randomUUID().toString();
            ClaimLoad plainLoad = new ClaimLoad(plain, "oo:soak:" + run + ":plain:", 2);
            ClaimLoad waitLoad = new ClaimLoad(waiting, "oo:soak:" + run + ":wait:", 2);
            long end = System.nanoTime() + Duration.ofSeconds(SECONDS).toNanos();
            int round = 0;
            try {
                Thread.sleep(2000);
                while (System.nanoTime() < end) {
                    plainLoad.fault();
                    waitLoad.fault();
                    long start = System.nanoTime();
                    String what = fault.inject(round++);
                    long settled = (System.nanoTime() - start) / 1_000_000;
                    Thread.sleep(Math.max(2000, EVERY * 1000 - settled));
                    long[] p = plainLoad.sinceFault();
                    long[] w = waitLoad.sinceFault();
                    System.out.printf("[redis-soak] %s round %d: %s; settled in %d ms; failed ops: %d without WAIT (last %d ms "
                            + "after the fault), %d with WAIT (last %d ms)%n", name, round, what, settled, p[0], p[1], w[0], w[1]);
                }
            } finally {
                plainLoad.close();
                waitLoad.close();
            }
            ClaimLoad.Report p = plainLoad.report().print(name + " soak " + SECONDS + " s, " + round + " faults, no WAIT");
            ClaimLoad.Report w = waitLoad.report().print(name + " soak " + SECONDS + " s, " + round + " faults, WAIT 1 200ms");
            assertEquals(0, p.unexpected());
            assertEquals(0, w.unexpected());
            assertEquals(0, w.confirmedWindowHits(), "a completion the replica acknowledged is never lost");
            assertTrue(round > 0);
        }
    }
}
