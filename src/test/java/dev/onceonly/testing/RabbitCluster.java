package dev.onceonly.testing;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A RabbitMQ cluster of its own on loopback, for failover tests: {@code n} extra nodes of the
 * machine's RabbitMQ installation, each with its own name ({@code onceonly-it-<port>@localhost}),
 * AMQP and distribution ports, data, log and pid files under one temporary directory, joined to
 * the first. The machine's own broker ({@code rabbit@...}, port 5672) is never touched: every
 * {@code rabbitmqctl} here names its node with {@code -n}.
 *
 * <p>{@link #close()} stops every node ({@code rabbitmqctl stop}, then {@code kill -9}) and deletes
 * the directory; a shutdown hook does the same if the JVM exits without it, and {@link #start}
 * first removes what a JVM that died before either (kill -9) left behind.
 *
 * <p>The nodes share the Erlang cookie of the user they run as. Run as root, they run as the
 * {@code rabbitmq} user (whose cookie the installation created), the way the installation's own
 * wrapper scripts run them; otherwise as the current user (cookie {@code ~/.erlang.cookie}, created
 * by the first node if missing).
 */
public final class RabbitCluster implements AutoCloseable {

    private static final String DIR_PREFIX = "onceonly-rabbit-cluster-";
    private static final Path RABBIT_BIN = Path.of("/usr/lib/rabbitmq/bin");
    private static final Duration CTL_TIMEOUT = Duration.ofSeconds(90);

    /** One node: its name, ports and files. */
    public record Node(String name, int amqpPort, int distPort, Path dir) {

        /** The beam's process id, from the pid file the node writes once it runs; empty before. */
        public Optional<Long> pid() {
            try {
                return Optional.of(Long.parseLong(Files.readString(dir.resolve("pid")).trim()));
            } catch (IOException | NumberFormatException e) {
                return Optional.empty();
            }
        }

        public boolean running() {
            return pid().flatMap(ProcessHandle::of).map(ProcessHandle::isAlive).orElse(false);
        }

        /** {@code 127.0.0.1:<port>}, for the connector's {@code addresses}. */
        public String address() {
            return "127.0.0.1:" + amqpPort;
        }
    }

    private final Path base;
    private final List<Node> nodes;
    private final List<Process> launchers = new ArrayList<>();
    private final Thread hook;
    private volatile Duration startup = Duration.ZERO;

    private RabbitCluster(Path base, List<Node> nodes) {
        this.base = base;
        this.nodes = List.copyOf(nodes);
        this.hook = new Thread(this::destroy, "rabbit-cluster-teardown");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * Starts {@code size} nodes side by side, waits until each runs, joins them to the first and
     * waits until the cluster sees them all. Fails (after tearing down what started) within about
     * two minutes.
     */
    public static RabbitCluster start(int size) throws Exception {
        long t0 = System.nanoTime();
        removeOrphans();
        int firstPort = freePorts(size);
        Path base = Files.createTempDirectory(DIR_PREFIX + firstPort + "-");
        Files.writeString(base.resolve("owner"), Long.toString(ProcessHandle.current().pid()));
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            int port = firstPort + i;
            nodes.add(new Node("onceonly-it-" + port + "@localhost", port, port + 20_000, base.resolve("node" + (i + 1))));
        }
        RabbitCluster cluster = new RabbitCluster(base, nodes);
        try {
            asBrokerUser(base);
            for (Node n : nodes) {
                cluster.launch(n);
            }
            for (Node n : nodes) {
                cluster.awaitBoot(n);
            }
            for (Node n : nodes.subList(1, nodes.size())) {
                cluster.ctl(n, "stop_app");
                cluster.ctl(n, "join_cluster", nodes.get(0).name());
                cluster.ctl(n, "start_app");
            }
            Eventually.await("all " + size + " nodes running in one cluster", Duration.ofSeconds(60),
                    () -> cluster.runningNodes(nodes.get(0)).size(), r -> r == size);
            cluster.startup = Duration.ofNanos(System.nanoTime() - t0);
            return cluster;
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    public List<Node> nodes() {
        return nodes;
    }

    public Node node(int i) {
        return nodes.get(i);
    }

    /** Comma-separated {@code host:port} of every node, the connector's {@code addresses}. */
    public String addresses() {
        return nodes.stream().map(Node::address).collect(Collectors.joining(","));
    }

    /** How long {@link #start} took: launch, boot, join. */
    public Duration startup() {
        return startup;
    }

    /** A node that runs, to ask. */
    public Node anyRunning() {
        return nodes.stream().filter(Node::running).findFirst().orElseThrow(() -> new IllegalStateException("no node runs"));
    }

    public Node byName(String name) {
        return nodes.stream().filter(n -> n.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no node " + name + " in " + nodes));
    }

    public Node byPort(int amqpPort) {
        return nodes.stream().filter(n -> n.amqpPort() == amqpPort).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no node on port " + amqpPort));
    }

    /** Kills the node's Erlang VM with SIGKILL: no goodbye to clients or peers, as a crashed machine. */
    public void kill(Node n) throws Exception {
        long pid = n.pid().orElseThrow(() -> new IllegalStateException(n.name() + " has no pid file"));
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        Eventually.await(n.name() + " dead", Duration.ofSeconds(20), n::running, r -> !r);
    }

    /** Starts a node that was killed again, with its data: it rejoins the cluster. */
    public void restart(Node n) throws Exception {
        if (n.running()) {
            return;
        }
        Files.deleteIfExists(n.dir().resolve("pid"));
        launch(n);
        awaitBoot(n);
    }

    /**
     * Waits until the node has booted. {@code await_startup} fails at once while the node has not
     * registered with epmd yet, so it is asked again until it answers or two minutes passed.
     */
    private void awaitBoot(Node n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (true) {
            try {
                ctl(n, "await_startup", "--timeout", "60");
                return;
            } catch (IllegalStateException e) {
                if (System.nanoTime() > deadline) {
                    String console = Files.exists(n.dir().resolve("console.log")) ? Files.readString(n.dir().resolve("console.log")) : "";
                    throw new IllegalStateException(n.name() + " did not boot; its console: " + console, e);
                }
                Thread.sleep(500);
            }
        }
    }

    /** The nodes the cluster, asked through {@code via}, reports running. */
    public List<String> runningNodes(Node via) throws Exception {
        String json = ctl(via, "cluster_status", "--formatter", "json");
        Matcher m = Pattern.compile("\"running_nodes\":\\[([^\\]]*)\\]").matcher(json);
        if (!m.find()) {
            return List.of();
        }
        return Stream.of(m.group(1).split(",")).map(s -> s.replace("\"", "").trim()).filter(s -> !s.isEmpty()).toList();
    }

    /** The node that leads the quorum queue {@code queue}, as a running node reports it; empty while none does. */
    public Optional<Node> leaderOf(String queue) throws Exception {
        String json = ctl(anyRunning(), "-q", "list_queues", "name", "leader", "--formatter", "json");
        Matcher m = Pattern.compile("\\{\"name\":\"" + Pattern.quote(queue) + "\",\"leader\":\"([^\"]*)\"").matcher(json);
        return m.find() ? nodes.stream().filter(n -> n.name().equals(m.group(1))).findFirst() : Optional.empty();
    }

    /**
     * The node serving the client connection named {@code name} or {@code name@<anything>} (the
     * connector's {@code onceonly:<channel>:<role>@<instance>}): the node whose AMQP port it is on.
     */
    public Optional<Node> nodeOfConnection(String name) throws Exception {
        for (String line : ctl(anyRunning(), "-q", "list_connections", "port", "client_properties").split("\n")) {
            if (line.contains("{\"connection_name\",\"" + name + "\"}") || line.contains("{\"connection_name\",\"" + name + "@")) {
                return Optional.of(byPort(Integer.parseInt(line.substring(0, line.indexOf('\t')).trim())));
            }
        }
        return Optional.empty();
    }

    /** Runs {@code rabbitmqctl -n <node> args}; fails with its output when it fails or hangs. */
    public String ctl(Node node, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(tool("rabbitmqctl"), "-n", node.name()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(asBrokerUser(cmd, List.of())).redirectErrorStream(true).start();
        // Read while it runs: a full pipe would block it.
        var out = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        });
        if (!p.waitFor(CTL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("rabbitmqctl -n " + node.name() + " " + String.join(" ", args) + " hung");
        }
        String text = out.get(10, TimeUnit.SECONDS);
        if (p.exitValue() != 0) {
            throw new IllegalStateException("rabbitmqctl -n " + node.name() + " " + String.join(" ", args) + " failed: " + text);
        }
        return text;
    }

    private void launch(Node n) throws IOException {
        Files.createDirectories(n.dir());
        Files.writeString(n.dir().resolve("rabbitmq.conf"), "listeners.tcp.default = 127.0.0.1:" + n.amqpPort() + "\n"
                // guest may connect from anywhere (here: still only loopback, the only listener).
                + "loopback_users = none\n"
                // A node of a small test cluster must not stop accepting publishes over disk space.
                + "disk_free_limit.absolute = 1MB\n");
        Files.writeString(n.dir().resolve("enabled_plugins"), "[].\n");
        Files.writeString(n.dir().resolve("rabbitmq-env.conf"), "");
        asBrokerUser(n.dir());
        List<String> env = List.of(
                "RABBITMQ_NODENAME=" + n.name(),
                "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
                "RABBITMQ_NODE_PORT=" + n.amqpPort(),
                "RABBITMQ_DIST_PORT=" + n.distPort(),
                // Not the installation's env file: it names the machine's own node.
                "RABBITMQ_CONF_ENV_FILE=" + n.dir().resolve("rabbitmq-env.conf"),
                "RABBITMQ_CONFIG_FILE=" + n.dir().resolve("rabbitmq.conf"),
                "RABBITMQ_ENABLED_PLUGINS_FILE=" + n.dir().resolve("enabled_plugins"),
                "RABBITMQ_MNESIA_BASE=" + n.dir().resolve("mnesia"),
                "RABBITMQ_LOG_BASE=" + n.dir().resolve("log"),
                "RABBITMQ_PID_FILE=" + n.dir().resolve("pid"));
        launchers.add(new ProcessBuilder(asBrokerUser(List.of(tool("rabbitmq-server")), env))
                .directory(n.dir().toFile())
                .redirectErrorStream(true).redirectOutput(n.dir().resolve("console.log").toFile()).start());
    }

    /** Stops every node, kills what does not stop, deletes the files. Safe to call twice. */
    @Override
    public void close() {
        destroy();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down: the hook runs destroy() again, harmlessly
        }
    }

    private synchronized void destroy() {
        List<Thread> stops = new ArrayList<>();
        for (Node n : nodes) {
            if (n.running()) {
                Thread t = new Thread(() -> {
                    try {
                        ctl(n, "stop");
                    } catch (Exception e) {
                        // killed below
                    }
                });
                t.start();
                stops.add(t);
            }
        }
        for (Thread t : stops) {
            try {
                t.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Node n : nodes) {
            n.pid().flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroyForcibly);
        }
        for (Process p : launchers) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        deleteTree(base);
    }

    /** Kills the nodes and deletes the directory of clusters whose JVM died without tearing them down. */
    private static void removeOrphans() throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().startsWith(DIR_PREFIX)).toList()) {
                long owner;
                try {
                    owner = Long.parseLong(Files.readString(dir.resolve("owner")).trim());
                } catch (IOException | NumberFormatException e) {
                    owner = -1;
                }
                if (owner > 0 && ProcessHandle.of(owner).map(ProcessHandle::isAlive).orElse(false)) {
                    continue; // another JVM's live cluster
                }
                try (Stream<Path> pids = Files.find(dir, 2, (p, a) -> p.getFileName().toString().equals("pid"))) {
                    for (Path pid : pids.toList()) {
                        try {
                            long p = Long.parseLong(Files.readString(pid).trim());
                            // Only a beam that is one of these nodes: a pid may have been reused.
                            ProcessHandle.of(p).filter(h -> h.info().commandLine().orElse("").contains("beam")
                                    && h.info().commandLine().orElse("").contains("onceonly-it-"))
                                    .ifPresent(ProcessHandle::destroyForcibly);
                        } catch (IOException | NumberFormatException e) {
                            // nothing to kill
                        }
                    }
                }
                deleteTree(dir);
            }
        }
    }

    /**
     * The first of {@code count} consecutive ports, each free with its distribution port (+20000),
     * picked at random in 25000-25899: clear of the ports the build's servers and the machine's
     * broker use, and of a cluster another JVM runs at the same time.
     */
    private static int freePorts(int count) {
        for (int tries = 0; tries < 50; tries++) {
            int first = 25_000 + ThreadLocalRandom.current().nextInt(900 - count);
            boolean free = true;
            for (int p = first; p < first + count && free; p++) {
                free = isFree(p) && isFree(p + 20_000);
            }
            if (free) {
                return first;
            }
        }
        throw new IllegalStateException("no " + count + " free consecutive ports in 25000-25899");
    }

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static String tool(String name) {
        Path installed = RABBIT_BIN.resolve(name);
        return Files.isExecutable(installed) ? installed.toString() : name;
    }

    private static boolean asRoot() {
        return "root".equals(System.getProperty("user.name")) && new File("/var/lib/rabbitmq").isDirectory();
    }

    /** Root runs the node as the installation's {@code rabbitmq} user, with its home (and so its cookie). */
    private static List<String> asBrokerUser(List<String> cmd, List<String> env) {
        if (!asRoot()) {
            List<String> direct = new ArrayList<>(List.of("env"));
            direct.addAll(env);
            direct.addAll(cmd);
            return direct;
        }
        List<String> line = new ArrayList<>(List.of("env", "HOME=/var/lib/rabbitmq"));
        line.addAll(env);
        line.addAll(cmd);
        String quoted = line.stream().map(a -> "'" + a.replace("'", "'\\''") + "'").collect(Collectors.joining(" "));
        return List.of("su", "rabbitmq", "-s", "/bin/sh", "-c", "exec " + quoted);
    }

    private static void asBrokerUser(Path dir) throws IOException {
        if (asRoot()) {
            try {
                Process p = new ProcessBuilder("chown", "-R", "rabbitmq:rabbitmq", dir.toString()).inheritIO().start();
                if (p.waitFor() != 0) {
                    throw new IOException("chown of " + dir + " failed");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: removeOrphans() tries again next time
        }
    }
}
