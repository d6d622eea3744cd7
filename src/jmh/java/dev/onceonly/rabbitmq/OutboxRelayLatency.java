package dev.onceonly.rabbitmq;

import com.rabbitmq.client.Address;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.engine.OutboxRelay;
import dev.onceonly.jpa.JpaOutboxStore;
import dev.onceonly.jpa.JtaOutbox;
import dev.onceonly.spi.OutboxListener;
import dev.onceonly.support.CurrentKey;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.ScratchDatabase;
import org.HdrHistogram.Histogram;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The relay's added latency, from a transaction's commit to the broker's confirm of its outbox row,
 * on this machine's PostgreSQL and RabbitMQ: {@code --count} transactions, each one row, sent by one
 * thread at {@code --rate} per second (0: as fast as it commits). Prints p50, p99 and max, and the
 * transactions per second with the outbox and, in the same run, of the same transaction without it.
 *
 * <pre>bench/run-outbox.sh [--count 5000] [--rate 500]</pre>
 */
public final class OutboxRelayLatency {

    public static void main(String[] args) throws Exception {
        int count = 5_000;
        int rate = 500;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--count" -> count = Integer.parseInt(args[i + 1]);
                case "--rate" -> rate = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        RabbitResources resources = RabbitResources.create(Executors.defaultThreadFactory());
        ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(1);
        try (ScratchDatabase db = ScratchDatabase.create(ScratchDatabase.Kind.POSTGRESQL, true)) {
            LocalJta jta = new LocalJta(db.sessionFactory());
            JpaOutboxStore store = new JpaOutboxStore(jta::entityManager, jta);
            String exchange = "amq.topic"; // exists on every broker; no queue takes the key, so mandatory rows would return
            String queue = "onceonly.bench.outbox." + System.nanoTime();
            try (com.rabbitmq.client.Connection c = new com.rabbitmq.client.ConnectionFactory().newConnection("onceonly-bench")) {
                var ch = c.createChannel();
                ch.queueDeclare(queue, false, false, true, null);
                ch.queueBind(queue, exchange, queue);
                OutboxEndpoint endpoint = new OutboxEndpoint(new ConnectionSettings(List.of(new Address("127.0.0.1", 5672)), "/",
                        "guest", "guest", false, false, Duration.ofSeconds(1), Duration.ofSeconds(5), "bench"),
                        Duration.ofSeconds(10), resources);
                endpoint.start();
                while (!endpoint.connected()) {
                    Thread.sleep(20);
                }
                Histogram micros = new Histogram(60_000_000L, 3);
                AtomicLong relayed = new AtomicLong();
                OutboxListener listener = new OutboxListener() {
                    @Override
                    public void relayed(int rows, boolean sweep, Duration[] sinceWrite) {
                        for (Duration d : sinceWrite) {
                            micros.recordValue(Math.max(1, d.toNanos() / 1_000));
                        }
                        relayed.addAndGet(rows);
                    }
                };
                try (OutboxRelay relay = new OutboxRelay(store, endpoint, new OutboxRelay.Settings(Duration.ofMinutes(10),
                        Duration.ofMinutes(10), 100, 5, Duration.ofDays(1), Duration.ofSeconds(12)), Clock.systemUTC(),
                        resources.executor(), scheduler, listener)) {
                    JtaOutbox outbox = new JtaOutbox(store, jta, relay::committed, Clock.systemUTC());
                    // Warm up both paths, then measure each.
                    run(jta, outbox, exchange, queue, 1_000, rate, true);
                    run(jta, outbox, exchange, queue, 1_000, rate, false);
                    while (relayed.get() < 1_000) {
                        Thread.sleep(10);
                    }
                    micros.reset();
                    relayed.set(0);
                    double plain = run(jta, outbox, exchange, queue, count, rate, false);
                    double withOutbox = run(jta, outbox, exchange, queue, count, rate, true);
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (relayed.get() < count && System.nanoTime() < deadline) {
                        Thread.sleep(10);
                    }
                    System.out.printf(Locale.ROOT, "outbox relay, %,d transactions of one row at %s/s on PostgreSQL and RabbitMQ (%d CPUs):%n"
                                    + "  commit -> confirm: p50 %,d µs, p90 %,d µs, p99 %,d µs, max %,d µs (%,d relayed)%n"
                                    + "  transactions/s on one thread: %,.0f without the outbox, %,.0f with it (%.3f)%n",
                            count, rate == 0 ? "full speed" : Integer.toString(rate), Runtime.getRuntime().availableProcessors(),
                            micros.getValueAtPercentile(50), micros.getValueAtPercentile(90), micros.getValueAtPercentile(99),
                            micros.getMaxValue(), relayed.get(), plain, withOutbox, withOutbox / plain);
                }
                endpoint.stop();
                ch.queueDelete(queue);
            }
        } finally {
            resources.executor().shutdownNow();
            resources.scheduler().shutdownNow();
            scheduler.shutdownNow();
        }
    }

    /** {@code count} transactions, each inserting one row into a table of its own and, if {@code send}, one outbox row. @return per second */
    private static double run(LocalJta jta, JtaOutbox outbox, String exchange, String queue, int count, int rate, boolean send)
            throws Exception {
        long start = System.nanoTime();
        long interval = rate == 0 ? 0 : 1_000_000_000L / rate;
        for (int i = 0; i < count; i++) {
            if (interval > 0) {
                long due = start + i * interval;
                while (System.nanoTime() < due) {
                    Thread.onSpinWait();
                }
            }
            int n = i;
            jta.inTransaction(() -> {
                jta.entityManager().createNativeQuery("select 1").getSingleResult();
                if (send) {
                    try (CurrentKey.Scope scope = CurrentKey.enter("bench:" + System.nanoTime() + ":" + n)) {
                        outbox.send(OutboxMessage.text(exchange, queue, "{\"n\":" + n + "}"));
                    }
                }
                return null;
            });
        }
        return count / ((System.nanoTime() - start) / 1e9);
    }
}
