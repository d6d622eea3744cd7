package dev.onceonly.chaos;

import dev.onceonly.testing.DemoClient;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Open Liberty server of the demo, created by the build ({@code liberty:create} and
 * {@code liberty:deploy}, never started by it), driven with Liberty's own {@code bin/server}
 * script: configured through a configDropins override and environment variables, started,
 * killed with SIGKILL (the pid Liberty wrote) and started again.
 */
public final class DemoInstance {

    public enum State { DOWN, STARTING, UP }

    private final String label;
    private final String server;
    private final Path wlp;
    private final int httpPort;
    private final int httpsPort;
    private final Map<String, String> env = new LinkedHashMap<>();
    private final DemoClient client;
    private volatile State state = State.DOWN;

    public DemoInstance(String label, String server, Path wlp, int httpPort, int httpsPort) {
        this.label = label;
        this.server = server;
        this.wlp = wlp;
        this.httpPort = httpPort;
        this.httpsPort = httpsPort;
        this.client = new DemoClient("http://127.0.0.1:" + httpPort);
        // The demo's PostgreSQL datasource takes its credentials through authData, which needs a
        // password; the PostgreSQL of the runs trusts local connections and takes any.
        env.put("ONCEONLY_POSTGRESQL_PASSWORD", UUID.randomUUID().toString());
    }

    public String label() {
        return label;
    }

    public String server() {
        return server;
    }

    public DemoClient client() {
        return client;
    }

    public State state() {
        return state;
    }

    public Path dir() {
        return wlp.resolve("usr/servers").resolve(server);
    }

    /** Environment variables the server's JVM gets (MicroProfile Config reads them: ONCEONLY_LEASE=2s...). */
    public DemoInstance env(String name, String value) {
        env.put(name, value);
        return this;
    }

    /**
     * Writes the override every start reads: ports, and server variables (MicroProfile Config reads
     * those before microprofile-config.properties, and unlike environment variables they can name
     * Reactive Messaging channel properties).
     */
    public void configure(Map<String, String> variables) throws IOException {
        if (!Files.isDirectory(dir())) {
            throw new IllegalStateException("no Liberty server " + dir() + ": the build creates it (mvn -DskipTests package "
                    + "liberty:create@it-chaos-a liberty:deploy@it-chaos-a, or mvn verify)");
        }
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- Written by the chaos driver. -->\n<server>\n");
        xml.append("    <httpEndpoint id=\"defaultHttpEndpoint\" host=\"127.0.0.1\" httpPort=\"").append(httpPort)
                .append("\" httpsPort=\"").append(httpsPort).append("\"/>\n");
        xml.append("    <applicationMonitor updateTrigger=\"disabled\" dropinsEnabled=\"false\"/>\n");
        // Every life's log is kept (Liberty keeps 2 by default), so log IDs can be counted over the run.
        xml.append("    <logging maxFiles=\"50\"/>\n");
        variables.forEach((k, v) -> xml.append("    <variable name=\"").append(escape(k)).append("\" value=\"").append(escape(v)).append("\"/>\n"));
        xml.append("</server>\n");
        Path overrides = dir().resolve("configDropins/overrides");
        Files.createDirectories(overrides);
        Files.writeString(overrides.resolve("chaos.xml"), xml);
    }

    /** Removes the logs of earlier lives, so that counting log IDs counts this run only. */
    public void clearLogs() throws IOException {
        Path logs = dir().resolve("logs");
        if (Files.isDirectory(logs)) {
            try (var files = Files.list(logs)) {
                for (Path f : files.toList()) {
                    if (Files.isRegularFile(f)) {
                        Files.delete(f);
                    }
                }
            }
        }
    }

    /** {@code bin/server start} (returns once the server runs; the application may still be starting). */
    public void start(boolean clean) throws Exception {
        state = State.STARTING;
        List<String> cmd = new ArrayList<>(List.of(wlp.resolve("bin/server").toString(), "start", server));
        if (clean) {
            cmd.add("--clean");
        }
        String out = run(cmd, Duration.ofMinutes(3));
        if (!out.contains("started")) {
            state = State.DOWN;
            throw new IllegalStateException("server start " + server + ": " + out);
        }
    }

    /** Waits for readiness; then the instance counts as up. */
    public void awaitReady(Duration limit) throws Exception {
        client.awaitReady(limit);
        state = State.UP;
    }

    /** SIGKILL to the server's JVM: no shutdown hook, no drain, in-flight transactions cut off. */
    public long kill9() throws Exception {
        long pid = pid();
        ProcessHandle handle = ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException(server + ": no process " + pid));
        state = State.DOWN;
        handle.destroyForcibly();
        handle.onExit().get(30, TimeUnit.SECONDS);
        return pid;
    }

    /** {@code bin/server stop}, quietly; a server that is not running is fine. */
    public void stop() {
        try {
            run(List.of(wlp.resolve("bin/server").toString(), "stop", server), Duration.ofMinutes(2));
        } catch (Exception e) {
            // best effort: the caller is shutting down
        }
        state = State.DOWN;
    }

    public boolean running() {
        try {
            return ProcessHandle.of(pid()).map(ProcessHandle::isAlive).orElse(false);
        } catch (Exception e) {
            return false;
        }
    }

    /** The pid Liberty's script wrote for the running server. */
    public long pid() throws IOException {
        return Long.parseLong(Files.readString(wlp.resolve("usr/servers/.pid/" + server + ".pid")).trim());
    }

    /** How often each log ID (e.g. {@code ONCE0201W}) occurs in every messages log of this server. */
    public Map<String, Integer> countLogIds() throws IOException {
        Map<String, Integer> counts = new java.util.TreeMap<>();
        Pattern id = Pattern.compile("\\b(ONCE\\d{4}[IWE]|CWWK[A-Z]\\d{4}[EW]|WTRN\\d{4}[EW]|J2CA\\d{4}[EW]|DSRA\\d{4}[EW])\\b");
        Path logs = dir().resolve("logs");
        if (!Files.isDirectory(logs)) {
            return counts;
        }
        try (var files = Files.list(logs)) {
            for (Path f : files.filter(p -> p.getFileName().toString().startsWith("messages")).toList()) {
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    Matcher m = id.matcher(line);
                    if (m.find()) {
                        counts.merge(m.group(1), 1, Integer::sum);
                    }
                }
            }
        }
        return counts;
    }

    private String run(List<String> cmd, Duration limit) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", cmd) + " did not end within " + limit.toSeconds() + " s");
        }
        return out;
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;");
    }

    @Override
    public String toString() {
        return label + " (" + server + ", port " + httpPort + ")";
    }
}
