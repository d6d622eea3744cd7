package dev.onceonly.it;

import dev.onceonly.chaos.ChaosDriver;
import dev.onceonly.chaos.ChaosReport;
import dev.onceonly.testing.TestRabbit;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short chaos run in the build (the full one: bench/run-chaos.sh, RELIABILITY.md): two demo
 * instances (servers onceonly-chaos-a and -b, created by the build, started and killed here) on one
 * queue, RabbitMQ, PostgreSQL with the ledger and a Redis of the run's own; 1,000 orders with 35 %
 * byte-identical copies and 11 invalid orders over 75 s while every fault kind is injected once or
 * more: kill -9 of each instance (three in all), Redis killed and restarted empty, Redis frozen
 * longer than the lease while slow handlers run, broker-side connection and channel closes,
 * PostgreSQL backends terminated. Every order's stock must be taken exactly once, every order
 * shipped once (by Idempotency-Key), every invalid order dead-lettered with its reason, and the
 * queues must end empty.
 */
class ChaosIT {

    @Test
    void everyOrderTakesEffectExactlyOnceThroughCrashesAndOutages() throws Exception {
        ChaosDriver.Settings s = settings("it", "chaos-inventory");
        s.orders = 1000;
        s.invalidOrders = 11;
        s.publishWindow = Duration.ofSeconds(75);
        s.kills = 3;
        run(s);
    }

    /**
     * The same faults with the demo's batch consumer taking the orders, in batches of up to 16: an
     * instance killed while a batch is in its handler (or between its commit and its acks) leaves
     * every message of the batch to be delivered again, and each one still takes effect once.
     */
    @Test
    void aBatchConsumerKeepsEveryOrderToOneEffectThroughCrashesAndOutages() throws Exception {
        ChaosDriver.Settings s = settings("it-batch", "chaos-batch");
        s.batchSize = 16;
        s.orders = 600;
        s.invalidOrders = 7;
        s.publishWindow = Duration.ofSeconds(45);
        s.kills = 2;
        run(s);
    }

    private static ChaosDriver.Settings settings(String label, String queue) throws Exception {
        String port = System.getProperty("http.port", "9080");
        ChaosDriver.Settings s = new ChaosDriver.Settings();
        s.label = label;
        s.copyPercent = 35;
        s.slowPercent = 2;
        s.deadline = Duration.ofMinutes(9);
        s.queue = TestRabbit.names(port) + "." + queue; // deleted with the build's other names
        s.schema = "onceonly_" + queue.replace('-', '_') + "_it_" + port;
        s.wlp = Path.of(System.getProperty("liberty.wlp.dir", "target/liberty/wlp"));
        s.servers = List.of("onceonly-chaos-a", "onceonly-chaos-b");
        s.ports = freePorts(4);
        s.out = Path.of("target/chaos");
        return s;
    }

    private static void run(ChaosDriver.Settings s) throws Exception {
        long start = System.nanoTime();
        ChaosReport report = new ChaosDriver(s).run();
        System.out.printf("ChaosIT (%s): %s (%.0f s)%n", s.label, report.verdict(), (System.nanoTime() - start) / 1e9);
        assertTrue(report.passed(), report::table);
    }

    private static int[] freePorts(int n) throws Exception {
        int[] ports = new int[n];
        ServerSocket[] held = new ServerSocket[n];
        try {
            for (int i = 0; i < n; i++) {
                held[i] = new ServerSocket(0);
                ports[i] = held[i].getLocalPort();
            }
        } finally {
            for (ServerSocket socket : held) {
                if (socket != null) {
                    socket.close();
                }
            }
        }
        return ports;
    }
}
