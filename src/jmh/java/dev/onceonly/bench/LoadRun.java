package dev.onceonly.bench;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import jakarta.json.Json;
import dev.onceonly.testing.Args;
import dev.onceonly.testing.DemoClient;
import jakarta.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * End-to-end load against the running demo (see {@code bench/run-load.sh}, which starts the demo
 * guarded and then with {@code onceonly.enabled=false}, and BENCHMARKS.md).
 *
 * <p>One run: waits for the demo's readiness, publishes a warm-up, starts a new latency window
 * ({@code DELETE /api/stats/timing}), then publishes {@code --count} orders to RabbitMQ with
 * publisher confirms, {@code --duplicate-percent} of them re-publications of an order published
 * shortly before, and follows the consumer until every message returned from it. Prints a progress
 * line every second and a result block, and writes the result as JSON ({@code --out}). {@code --url}
 * may list several instances of the demo consuming the same queue, comma-separated; their counts
 * are summed, and every instance must send its shipping calls to the first.
 * {@code LoadRun --summary file…} prints the table of several runs with the guarded/unguarded ratio
 * per round.
 */
public final class LoadRun {

    private static final Duration READY_TIMEOUT = Duration.ofMinutes(3);
    /** No progress for this long ends the run with an error instead of waiting forever. */
    private static final Duration STALL_TIMEOUT = Duration.ofSeconds(60);
    /** A duplicate copies one of the last this many distinct orders: redeliveries and publisher retries come soon after. */
    private static final int DUPLICATE_WINDOW = 1000;
    private static final int CONFIRM_BATCH = 500;
    /**
     * Orders consumed before the measurement: the server's JIT compiler must be done with the
     * consumer's path first. After 4,000 it still took 38 % of the server's CPU samples through the
     * measurement, in both modes, so the run compared two servers still compiling.
     */
    private static final int WARMUP = 30_000;
    /**
     * Seconds the machine is watched with the servers up and the queue empty, after the warm-up:
     * what RabbitMQ, Liberty, the databases and this tool spend per second doing no message at
     * all. The measured phase pays it for every second it lasts, so a slower mode is charged more
     * of it per message; the run reports CPU per message with it and above it.
     */
    private static final int IDLE_SECONDS = 10;

    private final Args opts;
    /** Every instance of the demo on the queue; the first also serves every instance's shipping calls. */
    private final List<DemoClient> demos = new ArrayList<>();

    private LoadRun(Args opts) {
        this.opts = opts;
        for (String url : opts.get("url", "http://localhost:9080").split(",")) {
            demos.add(new DemoClient(url.strip()));
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--summary")) {
            List<JsonObject> runs = new ArrayList<>();
            for (int i = 1; i < args.length; i++) {
                runs.add(DemoClient.parse(Files.readString(Path.of(args[i]))));
            }
            System.out.print(LoadSummary.table(runs));
            return;
        }
        Args opts = Args.parse(args,
                "--count --duplicate-percent --warmup --idle-seconds --skus --label --round --url --amqp --exchange --routing-key --queue --out");
        JsonObject result = new LoadRun(opts).run();
        String out = opts.get("out");
        if (out != null) {
            Files.createDirectories(Path.of(out).toAbsolutePath().getParent());
            Files.writeString(Path.of(out), result.toString() + "\n");
        }
    }

    private JsonObject run() throws Exception {
        int count = opts.integer("count", 20_000);
        int duplicatePercent = opts.integer("duplicate-percent", 20);
        int warmup = opts.integer("warmup", WARMUP);
        int idleSeconds = opts.integer("idle-seconds", IDLE_SECONDS);
        int skus = opts.integer("skus", 20);
        String label = opts.get("label", "run");
        String queue = opts.get("queue", "inventory-bench");
        if (count < 1 || duplicatePercent < 0 || duplicatePercent > 90 || warmup < 0 || idleSeconds < 1 || skus < 1) {
            throw new IllegalArgumentException("need --count >= 1, --duplicate-percent 0..90, --warmup >= 0, --idle-seconds >= 1, --skus >= 1");
        }

        for (DemoClient demo : demos) {
            demo.awaitReady(READY_TIMEOUT);
        }
        ConnectionFactory cf = new ConnectionFactory();
        cf.setUri(opts.get("amqp", "amqp://guest:guest@127.0.0.1:5672"));
        try (Connection connection = cf.newConnection("onceonly-load")) {
            Channel publish = connection.createChannel();
            Channel probe = connection.createChannel();
            publish.confirmSelect();
            // Mandatory publishing: an order no queue takes (wrong routing key) must fail the run, not vanish.
            AtomicReference<String> unroutable = new AtomicReference<>();
            publish.addReturnListener(r -> unroutable.compareAndSet(null, r.getReplyText() + " (" + r.getRoutingKey() + ")"));
            probe.queuePurge(queue); // leftovers of an aborted run would count as this run's messages
            // The order.reserved events of the outbox mode land here (the demo's own consumer of them is
            // off in that mode), so what is measured is the outbox and the relay, not a second consumer.
            String sink = queue + ".reserved-sink";
            probe.queueDeclare(sink, false, false, false, null);
            probe.queueBind(sink, opts.get("exchange", "orders"), "order.reserved");
            probe.queuePurge(sink);

            if (warmup > 0) {
                System.out.printf("[%s] warm-up: %,d orders%n", label, warmup);
                Orders warm = new Orders("warm-" + UUID.randomUUID() + "-", warmup, 0, skus);
                follow(label + " warm-up", warm, publish, probe, queue, unroutable, timing().getJsonNumber("returned").longValue());
            }
            for (DemoClient demo : demos) {
                demo.call("DELETE", "/api/stats/timing");
            }
            System.out.printf("[%s] idle: %d s with the queue empty%n", label, idleSeconds);
            Thread.sleep(1_000); // the done marks and the relay's last sends behind the warm-up
            Watched idle = Watched.over(() -> Thread.sleep(idleSeconds * 1_000L));
            JsonObject before = stats();
            Orders orders = new Orders("load-" + UUID.randomUUID() + "-", count, duplicatePercent, skus);
            System.out.printf("[%s] measuring: %,d messages (%,d distinct orders, %,d duplicates) on %d SKUs%n",
                    label, count, orders.distinct(), count - orders.distinct(), skus);
            Watched measured = Watched.over(() -> follow(label, orders, publish, probe, queue, unroutable, 0));
            JsonObject after = stats();
            JsonObject shipping = shippingSummary(orders.prefix);
            JsonObject result = result(opts, demos.size(), label, count, orders, measured, idle, before, after, shipping);
            System.out.print(LoadSummary.block(result));
            checkMode(label, after.getJsonObject("timing").getJsonObject("guardMicros").getJsonNumber("count").longValue());
            Thread.sleep(1_000); // the relay publishes right behind the consumer
            System.out.printf("[%s] order.reserved events in %s: %,d%n", label, sink, probe.queueDeclarePassive(sink).getMessageCount());
            probe.queueDelete(sink);
            return result;
        }
    }

    /**
     * Publishes {@code orders} (from a thread of its own) and prints progress until every message
     * returned from the consumer ({@code timing.returned} of the demo, counted from {@code base})
     * and the queue is empty.
     */
    private void follow(String label, Orders orders, Channel publish, Channel probe, String queue,
                        AtomicReference<String> unroutable, long base) throws Exception {
        AtomicInteger published = new AtomicInteger();
        AtomicReference<Exception> publishFailure = new AtomicReference<>();
        String exchange = opts.get("exchange", "orders");
        String routingKey = opts.get("routing-key", "order.bench");
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder()
                .contentType("application/json").deliveryMode(2).build();
        long t0 = System.nanoTime();
        Thread publisher = new Thread(() -> {
            try {
                for (int i = 0; i < orders.size; i++) {
                    publish.basicPublish(exchange, routingKey, true, props, orders.json(i).getBytes(StandardCharsets.UTF_8));
                    if ((i + 1) % CONFIRM_BATCH == 0 || i + 1 == orders.size) {
                        publish.waitForConfirmsOrDie(60_000);
                        published.set(i + 1);
                    }
                }
            } catch (Exception e) {
                publishFailure.set(e);
            }
        }, "onceonly-load-publisher");
        publisher.start();

        long lastReturned = 0;
        long lastProgressNanos = System.nanoTime();
        long previousTick = System.nanoTime();
        while (true) {
            Thread.sleep(1000);
            if (publishFailure.get() != null) {
                throw new IllegalStateException("publishing failed after " + published.get() + " messages", publishFailure.get());
            }
            if (unroutable.get() != null) {
                throw new IllegalStateException("broker returned an order as unroutable: " + unroutable.get()
                        + "; is the demo's queue bound to this routing key (DEMO_BINDING)?");
            }
            long returned = timing().getJsonNumber("returned").longValue() - base;
            long ready = probe.messageCount(queue);
            long now = System.nanoTime();
            double rate = (returned - lastReturned) * 1e9 / (now - previousTick);
            System.out.printf("[%s] %5.1f s  published %,d/%,d  consumed %,d  %,.0f msg/s  queue %,d%n",
                    label, (now - t0) / 1e9, published.get(), orders.size, returned, rate, ready);
            if (returned != lastReturned) {
                lastProgressNanos = now;
            } else if (now - lastProgressNanos > STALL_TIMEOUT.toNanos()) {
                throw new IllegalStateException("no message consumed for " + STALL_TIMEOUT.toSeconds() + " s; "
                        + returned + " of " + orders.size + " returned, " + ready + " ready in " + queue + "; stats: " + stats());
            }
            lastReturned = returned;
            previousTick = now;
            if (returned >= orders.size && ready == 0 && published.get() == orders.size) {
                publisher.join();
                return;
            }
        }
    }

    private static JsonObject result(Args opts, int instances, String label, int count, Orders orders,
                                     Watched measured, Watched idle, JsonObject before, JsonObject after, JsonObject shipping) {
        CpuUse cpu = measured.cpu;
        // What the machine would have spent over the measured phase's length doing nothing, taken off.
        double idleMicros = idle.cpu.busyMicros() * measured.seconds / idle.seconds;
        JsonObject timing = after.getJsonObject("timing");
        var outcomes = Json.createObjectBuilder();
        for (String k : List.of("processed", "duplicateByClaimStore", "duplicateByLedger", "busy", "failed", "retry",
                "conflict", "rejected", "deadLettered")) {
            outcomes.add(k, after.getJsonNumber(k).longValue() - before.getJsonNumber(k).longValue());
        }
        return Json.createObjectBuilder()
                .add("label", label)
                .add("round", opts.get("round", "1"))
                .add("instances", instances)
                .add("messages", count)
                .add("distinctOrders", orders.distinct())
                .add("wallSeconds", Math.round(measured.seconds * 10) / 10.0)
                .add("machineCpuBusyPercent", Math.round(cpu.busyShare() * 1000) / 10.0)
                .add("machineCpuMicrosPerMessage", Math.round(cpu.busyMicros() / count))
                .add("cpuMicrosPerMessageByProcess", cpu.microsByProcessPer(count))
                .add("idleMachineCpuBusyPercent", Math.round(idle.cpu.busyShare() * 1000) / 10.0)
                .add("idleCpuMicrosPerSecondByProcess", idle.cpu.microsByProcessPer(idle.seconds))
                .add("machineCpuMicrosPerMessageAboveIdle", Math.round((cpu.busyMicros() - idleMicros) / count))
                .add("timing", timing)
                .add("outcomes", outcomes)
                .add("shippingCalls", shipping.getInt("calls"))
                .add("shippedOrders", shipping.getInt("orders"))
                .add("maxShipmentsPerOrder", shipping.getInt("maxPerOrder"))
                .build();
    }

    /** The machine's CPU use over a span of this tool's work, and the span's length. */
    private record Watched(CpuUse cpu, double seconds) {

        interface Work {
            void run() throws Exception;
        }

        static Watched over(Work work) throws Exception {
            CpuUse before = CpuUse.read();
            long start = System.nanoTime();
            work.run();
            double seconds = (System.nanoTime() - start) / 1e9;
            return new Watched(CpuUse.read().minus(before), seconds);
        }
    }

    /**
     * A run labelled guarded (or direct, or batched) must have seen the guard, and an unguarded or seed
     * one must not: the kill switch is what is compared, and the seed consumer protects itself by hand.
     */
    private static void checkMode(String label, long guardSamples) {
        if (List.of("guarded", "direct", "batched").contains(label) && guardSamples == 0) {
            throw new IllegalStateException("run labelled " + label + ", but the guard reported nothing: is onceonly.enabled=false set?");
        }
        if ((label.equals("unguarded") || label.equals("seed")) && guardSamples > 0) {
            throw new IllegalStateException("run labelled " + label + ", but the guard reported " + guardSamples
                    + " messages: the kill switch (ONCEONLY_ENABLED=false) did not reach the server");
        }
    }

    /** The demo's {@code /api/stats}; with several instances, their sum ({@link LoadSummary#merge}). */
    private JsonObject stats() throws Exception {
        List<JsonObject> each = new ArrayList<>();
        for (DemoClient demo : demos) {
            each.add(demo.stats());
        }
        return each.size() == 1 ? each.get(0) : LoadSummary.merge(each);
    }

    private JsonObject timing() throws Exception {
        return stats().getJsonObject("timing");
    }

    /** From the first instance, whose shipping endpoint every instance calls: an order shipped twice by two instances shows. */
    private JsonObject shippingSummary(String prefix) throws Exception {
        return DemoClient.parse(demos.get(0).call("GET", "/api/shipping?prefix=" + prefix));
    }

    /**
     * The message stream: {@code size} messages of which exactly {@code size * duplicatePercent / 100}
     * (spread evenly) repeat, body for body, an order among the last {@link #DUPLICATE_WINDOW}
     * distinct ones; the rest are new orders of one unit, round-robin over the SKUs. Seeded: two
     * runs of one size publish the same shape.
     */
    static final class Orders {
        final String prefix;
        final int size;
        private final int[] orderOf; // message index -> order number
        private final int distinct;
        private final int skus;

        Orders(String prefix, int size, int duplicatePercent, int skus) {
            this.prefix = prefix;
            this.size = size;
            this.skus = skus;
            this.orderOf = new int[size];
            Random random = new Random(42);
            int next = 0;
            for (int i = 0; i < size; i++) {
                // Bresenham-style: a duplicate wherever floor(i * p / 100) steps, exactly size * p / 100 of them.
                boolean duplicate = next > 0 && (long) (i + 1) * duplicatePercent / 100 != (long) i * duplicatePercent / 100;
                orderOf[i] = duplicate ? next - 1 - random.nextInt(Math.min(next, DUPLICATE_WINDOW)) : next++;
            }
            this.distinct = next;
        }

        int distinct() {
            return distinct;
        }

        String json(int i) {
            int order = orderOf[i];
            return Json.createObjectBuilder().add("orderId", prefix + order).add("sku", "bench-" + order % skus)
                    .add("quantity", 1).build().toString();
        }
    }
}
