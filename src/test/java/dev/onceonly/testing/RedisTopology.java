package dev.onceonly.testing;

import redis.clients.jedis.Jedis;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Real multi-process Redis deployments on loopback for one test class: a Sentinel group (master,
 * replica, three sentinels) or a Cluster (three masters with a replica each). Every process runs
 * from a temporary directory of its own, without persistence, on ports picked free (never the
 * machine's shared Redis). {@link #close()} kills every process it started, forcibly if need be,
 * and a shutdown hook does the same if the JVM ends first, so nothing is left running.
 */
public final class RedisTopology implements AutoCloseable {

    /** One process: a data node or a sentinel. */
    public static final class Node {
        private final int port;
        private final Path dir;
        private final List<String> command;
        private Process process;

        private Node(int port, Path dir, List<String> command) {
            this.port = port;
            this.dir = dir;
            this.command = command;
        }

        public int port() {
            return port;
        }

        public String address() {
            return "127.0.0.1:" + port;
        }

        /** A single connection to this process (cluster and sentinel commands included); close it. */
        public Jedis client() {
            return new Jedis("127.0.0.1", port, 2000);
        }

        public boolean alive() {
            return process != null && process.isAlive();
        }
    }

    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();
    private final List<Node> sentinels = new ArrayList<>();
    private final Thread hook = new Thread(this::killAll, "redis-topology-cleanup");

    private RedisTopology(String name) throws IOException {
        dir = Files.createTempDirectory("onceonly-" + name);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * A master, one replica and three sentinels monitoring it as {@code m} with quorum 2.
     *
     * @param downAfterMillis sentinel {@code down-after-milliseconds}
     * @param serverArgs      further arguments for both data nodes, e.g. {@code --min-replicas-to-write 1}
     * @return the running group, replica in sync and sentinels aware of each other
     */
    public static RedisTopology sentinel(int downAfterMillis, String... serverArgs) throws Exception {
        RedisTopology t = new RedisTopology("sentinel");
        try {
            Node master = t.server(freePort(false), serverArgs);
            List<String> replicaArgs = new ArrayList<>(List.of(serverArgs));
            replicaArgs.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(master.port)));
            Node replica = t.server(freePort(false), replicaArgs.toArray(String[]::new));
            t.awaitInSync(master, 1);
            for (int i = 0; i < 3; i++) {
                int port = freePort(false);
                Path d = Files.createDirectories(t.dir.resolve("s" + port));
                Path conf = d.resolve("sentinel.conf");
                Files.writeString(conf, String.join("\n",
                        "port " + port,
                        "bind 127.0.0.1",
                        "dir " + d,
                        "sentinel monitor m 127.0.0.1 " + master.port + " 2",
                        "sentinel down-after-milliseconds m " + downAfterMillis,
                        "sentinel failover-timeout m 4000",
                        "sentinel parallel-syncs m 1",
                        ""));
                Node s = new Node(port, d, List.of("redis-server", conf.toString(), "--sentinel"));
                t.sentinels.add(s);
                t.launch(s);
            }
            for (Node s : t.sentinels) {
                Eventually.await("sentinel " + s.port + " to see the replica and two other sentinels",
                        java.time.Duration.ofSeconds(30), () -> {
                            try (Jedis c = s.client()) {
                                return c.sentinelReplicas("m").stream().anyMatch(r -> r.get("port").equals(Integer.toString(replica.port))
                                        && !r.get("flags").contains("down"))
                                        && c.sentinelSentinels("m").size() == 2;
                            } catch (RuntimeException e) {
                                return false;
                            }
                        }, ok -> ok);
            }
            return t;
        } catch (Exception | Error e) {
            t.close();
            throw e;
        }
    }

    /**
     * One plain server.
     *
     * @param extra further redis-server arguments, e.g. {@code --requirepass secret}
     * @return the running server
     */
    public static RedisTopology standalone(String... extra) throws Exception {
        RedisTopology t = new RedisTopology("standalone");
        try {
            t.server(freePort(false), extra);
            return t;
        } catch (Exception | Error e) {
            t.close();
            throw e;
        }
    }

    /**
     * Three masters with one replica each, slots spread by {@code redis-cli --cluster create}.
     *
     * @param nodeTimeoutMillis {@code cluster-node-timeout}: how soon a master that stopped answering is failed over
     * @return the running cluster, every slot covered
     */
    public static RedisTopology cluster(int nodeTimeoutMillis) throws Exception {
        RedisTopology t = new RedisTopology("cluster");
        try {
            List<String> addresses = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                int port = freePort(true);
                t.server(port, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", Integer.toString(nodeTimeoutMillis));
                addresses.add("127.0.0.1:" + port);
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            create.addAll(addresses);
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            cli(create);
            t.awaitClusterOk();
            // Each replica done with its first sync: until then WAIT counts it out.
            for (Node n : t.nodes) {
                try (Jedis c = n.client()) {
                    if (c.info("replication").contains("role:master")) {
                        t.awaitInSync(n, 1);
                    }
                }
            }
            return t;
        } catch (Exception | Error e) {
            t.close();
            throw e;
        }
    }

    /** Waits until every live data node says {@code cluster_state:ok} and agrees on three masters. */
    public void awaitClusterOk() throws Exception {
        for (Node n : nodes) {
            if (!n.alive()) {
                continue;
            }
            Eventually.await("cluster state ok on " + n.port, java.time.Duration.ofSeconds(60), () -> {
                try (Jedis c = n.client()) {
                    return c.clusterInfo().contains("cluster_state:ok") && masters(c) == 3;
                } catch (RuntimeException e) {
                    return false;
                }
            }, ok -> ok);
        }
    }

    private static long masters(Jedis c) {
        return c.clusterNodes().lines().filter(l -> l.contains("master") && !l.contains("fail")).count();
    }

    /** Runs redis-cli with these arguments; fails with its output unless it exits 0. */
    public static String cli(List<String> args) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(args).redirectErrorStream(true).start();
        byte[] out;
        try {
            out = p.getInputStream().readAllBytes();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException(args + " did not end");
            }
        } finally {
            p.destroyForcibly();
        }
        String text = new String(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IllegalStateException(args + " failed: " + text);
        }
        return text;
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    public List<Node> sentinels() {
        return List.copyOf(sentinels);
    }

    /** The data node on this port. */
    public Node node(int port) {
        return nodes.stream().filter(n -> n.port == port).findFirst().orElseThrow();
    }

    /** {@code host:port} of every sentinel, for the store's settings. */
    public List<String> sentinelAddresses() {
        return sentinels.stream().map(Node::address).toList();
    }

    /** The master the sentinels name now. */
    public int sentinelMasterPort() {
        for (Node s : sentinels) {
            if (!s.alive()) {
                continue;
            }
            try (Jedis c = s.client()) {
                return Integer.parseInt(c.sentinelGetMasterAddrByName("m").get(1));
            } catch (RuntimeException e) {
                // try the next sentinel
            }
        }
        throw new IllegalStateException("no sentinel answers");
    }

    /** Kills the process at once (SIGKILL): no shutdown, nothing flushed, its clients see resets. */
    public void kill9(Node n) throws InterruptedException {
        n.process.destroyForcibly();
        n.process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Starts a killed process again, with its own directory and arguments (a cluster node keeps its nodes.conf). */
    public void restart(Node n) throws IOException, InterruptedException {
        if (n.alive()) {
            throw new IllegalStateException("still running: " + n.port);
        }
        launch(n);
    }

    /** Freezes the process (SIGSTOP): it keeps its sockets and answers nothing. */
    public void pause(Node n) throws IOException, InterruptedException {
        signal(n, "STOP");
    }

    /** Thaws a frozen process (SIGCONT). */
    public void resume(Node n) throws IOException, InterruptedException {
        signal(n, "CONT");
    }

    private static void signal(Node n, String name) throws IOException, InterruptedException {
        if (new ProcessBuilder("kill", "-" + name, Long.toString(n.process.pid())).start().waitFor() != 0) {
            throw new IllegalStateException("kill -" + name + " failed");
        }
    }

    private Node server(int port, String... extra) throws IOException, InterruptedException {
        Path d = Files.createDirectories(dir.resolve("n" + port));
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--dir", d.toString(), "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--logfile", d.resolve("redis.log").toString()));
        cmd.addAll(List.of(extra));
        Node n = new Node(port, d, cmd);
        nodes.add(n);
        launch(n);
        return n;
    }

    private void launch(Node n) throws IOException, InterruptedException {
        n.process = new ProcessBuilder(n.command).redirectErrorStream(true)
                .redirectOutput(n.dir.resolve("stdout.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            try (Jedis c = n.client()) {
                c.ping();
                return;
            } catch (redis.clients.jedis.exceptions.JedisDataException needsPassword) {
                return; // NOAUTH: it is up, and wants the password the test gave it
            } catch (RuntimeException notYet) {
                if (System.nanoTime() > deadline || !n.process.isAlive()) {
                    throw new IllegalStateException("redis-server on port " + n.port + " did not start: "
                            + Files.readString(n.dir.resolve("stdout.log")));
                }
                Thread.sleep(50);
            }
        }
    }

    private void awaitInSync(Node master, int replicas) throws Exception {
        Eventually.await("replicas in sync with " + master.port, java.time.Duration.ofSeconds(30), () -> {
            try (Jedis c = master.client()) {
                String info = c.info("replication");
                return info.contains("connected_slaves:" + replicas) && info.contains("state=online");
            }
        }, ok -> ok);
    }

    /** Stops every process (SIGTERM, then SIGKILL after 5 s) and deletes the directory. */
    @Override
    public void close() {
        killAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs or ran
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }

    private void killAll() {
        List<Node> all = new ArrayList<>(sentinels);
        all.addAll(nodes);
        for (Node n : all) {
            if (n.process != null && n.process.isAlive()) {
                // A frozen process ignores SIGTERM until thawed.
                try {
                    signal(n, "CONT");
                } catch (Exception ignored) {
                    // gone already
                }
                n.process.destroy();
            }
        }
        for (Node n : all) {
            if (n.process == null) {
                continue;
            }
            try {
                if (!n.process.waitFor(5, TimeUnit.SECONDS)) {
                    n.process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                n.process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A free loopback port, never one of the machine's shared services; for cluster nodes also with
     * its bus port (port + 10000) free and valid.
     */
    static int freePort(boolean withBus) throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = withBus ? ThreadLocalRandom.current().nextInt(20000, 30000) : 0;
            try (ServerSocket s = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
                if (RESERVED.containsKey(port)) {
                    continue;
                }
                if (withBus) {
                    try (ServerSocket bus = new ServerSocket(port + 10000, 1, java.net.InetAddress.getLoopbackAddress())) {
                        // free too
                    }
                }
                return port;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IOException("no free port pair found");
    }

    private static final Map<Integer, String> RESERVED = Map.of(6379, "shared redis", 6390, "shared", 9080, "liberty",
            9081, "liberty", 9082, "liberty", 9083, "liberty", 5673, "broker", 4319, "otlp");
}
