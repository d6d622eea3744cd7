package dev.onceonly.chaos;

import redis.clients.jedis.RedisClient;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The chaos run's own Redis, on a free loopback port in 16500-16599 (never the machine's 6379 or
 * the build's 6390), without persistence: killed with SIGKILL and started again empty on the same
 * port, or frozen with SIGSTOP and thawed with SIGCONT.
 */
public final class ChaosRedis implements AutoCloseable {

    private final int port;
    private Process process;
    private boolean paused;

    public ChaosRedis() throws Exception {
        port = freePort();
        start();
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    public synchronized void start() throws Exception {
        process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction", "--daemonize", "no")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try (RedisClient c = RedisClient.create("127.0.0.1", port)) {
                c.ping();
                return;
            } catch (RuntimeException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("redis-server on port " + port + " did not start");
    }

    /** SIGKILL: every claim and every DONE key is gone. */
    public synchronized void kill9() throws Exception {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGSTOP: connections stay open, nothing answers; keys keep expiring by the wall clock. */
    public synchronized void pause() throws Exception {
        signal("STOP");
        paused = true;
    }

    public synchronized void resume() throws Exception {
        signal("CONT");
        paused = false;
    }

    private void signal(String name) throws Exception {
        Process kill = new ProcessBuilder(List.of("kill", "-" + name, Long.toString(process.pid()))).start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
        }
    }

    private static int freePort() {
        for (int p = 16500; p < 16600; p++) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", p), 200);
            } catch (IOException free) {
                return p;
            }
        }
        throw new IllegalStateException("no free port in 16500-16599 for the chaos run's Redis");
    }

    @Override
    public synchronized void close() throws Exception {
        if (paused) {
            resume();
        }
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
