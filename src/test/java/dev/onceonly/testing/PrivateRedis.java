package dev.onceonly.testing;

import redis.clients.jedis.RedisClient;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;

/**
 * A Redis server of the test's own, on a free loopback port: for measurements no other client may
 * disturb and for stopping Redis without touching the machine's one.
 */
public final class PrivateRedis implements AutoCloseable {

    private final int port;
    private Process process;

    public PrivateRedis() throws IOException, InterruptedException {
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        start();
    }

    public void start() throws IOException, InterruptedException {
        process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try (RedisClient c = client()) {
                c.ping();
                return;
            } catch (RuntimeException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("private redis-server on port " + port + " did not start");
    }

    public void stop() throws InterruptedException {
        process.destroy();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Freezes the server process (SIGSTOP): it keeps its socket, accepts connections and answers nothing. */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** Thaws a paused server (SIGCONT). */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    private void signal(String name) throws IOException, InterruptedException {
        if (new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor() != 0) {
            throw new IllegalStateException("kill -" + name + " failed");
        }
    }

    public int port() {
        return port;
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    public RedisClient client() {
        return RedisClient.create("127.0.0.1", port);
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
