package dev.onceonly.chaos;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.onceonly.testing.TestRabbit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One chaos run (see RELIABILITY.md): two demo instances on one queue, on RabbitMQ, PostgreSQL
 * (ledger on) and a Redis of the run's own, while orders and their copies are published and faults
 * are injected one after the other: {@code kill -9} of each instance (restarted at once), Redis
 * killed and restarted empty, Redis frozen longer than the lease while slow handlers run, the
 * broker closing the instances' connections, the broker closing their consuming channels, and
 * PostgreSQL terminating their backends. When everything is drained it checks every order's effect
 * in the database, every shipment, and every dead letter, and returns a {@link ChaosReport}.
 *
 * <p>Used by {@code ChaosIT} (short) and {@code bench/run-chaos.sh} (full).
 */
public final class ChaosDriver {

    /** What a run does; the defaults are the full run's. */
    public static final class Settings {
        public int orders = 10_000;
        public int copyPercent = 35;
        public int invalidOrders = 22;
        public Duration publishWindow = Duration.ofSeconds(180);
        /** kill -9 in all, alternating between the instances (at least 2: each once). */
        public int kills = 4;
        public Duration lease = Duration.ofSeconds(2);
        public double slowPercent = 0.5;
        public Duration slowDelay = Duration.ofSeconds(3);
        public int concurrency = 2;
        /**
         * 0: the demo's single-message consumer takes the orders; more: its batch consumer
         * ({@code InventoryBatchConsumer}) does, with batches of up to this many.
         */
        public int batchSize = 0;
        /** The whole run, start to verdict, ends by then. */
        public Duration deadline = Duration.ofMinutes(15);
        public String queue = "inventory-chaos";
        /** The consumed queue's type: {@code classic}, or {@code quorum} (replicated; the broker counts deliveries). */
        public String queueType = "classic";
        public String schema = "onceonly_chaos";
        public Path wlp = Path.of("target/liberty/wlp");
        public List<String> servers = List.of("onceonly-chaos-a", "onceonly-chaos-b");
        public int firstHttpPort = 19180;
        /** HTTP and HTTPS ports of instance a, then b; when null, four from {@link #firstHttpPort} on. */
        public int[] ports;
        public String label = "chaos";
        public long seed = 42;
        public Path out = Path.of("target/chaos");
    }

    static final long INITIAL_STOCK = 1_000_000;
    private static final Duration READY_LIMIT = Duration.ofMinutes(5);
    private static final Duration QUIET = Duration.ofSeconds(3);

    private final Settings s;
    private final String runId = UUID.randomUUID().toString().replace("-", "").substring(0, 7);
    private final long t0 = System.nanoTime();
    private final ChaosReport report;
    private final List<DemoInstance> instances = new ArrayList<>();
    private final Map<String, Long> readyAgainNanos = new ConcurrentHashMap<>();
    private final List<Thread> restarts = new CopyOnWriteArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicInteger published = new AtomicInteger();
    private final AtomicInteger faultsDone = new AtomicInteger();
    private volatile boolean publishingDone;
    private volatile boolean faultsFinished;
    private volatile String lastFault = "none yet";
    private volatile long lastSlowPublishNanos;
    private final List<ChaosReport.DeadLetter> deadLetters = new CopyOnWriteArrayList<>();
    /** order id → message id → copies of the order.reserved events the instances sent through the outbox. */
    private final Map<String, Map<String, Integer>> reserved = new ConcurrentHashMap<>();

    private ChaosOrders orders;
    private long[] confirmedNanos;
    private long[] doneNanos;
    private long publishStart;

    public ChaosDriver(Settings settings) {
        this.s = settings;
        if (s.kills < 2 || s.servers.size() != 2) {
            throw new IllegalArgumentException("need two servers and at least two kills (each instance once)");
        }
        this.report = new ChaosReport(s, runId);
    }

    public ChaosReport run() throws Exception {
        orders = new ChaosOrders(runId, s.orders, s.copyPercent, s.invalidOrders, s.seed);
        confirmedNanos = new long[s.orders];
        doneNanos = new long[s.orders];
        report.orders = orders;
        say("run %s: %,d orders, %,d copies (%,d held back to the end), %d invalid; %,d messages over %d s; %d kill -9; lease %s; "
                        + "%.1f %% of handlers slowed by %s; %d channel(s) per instance",
                runId, s.orders, orders.copies, orders.delayed.size(), orders.invalid.size(), orders.messages(),
                s.publishWindow.toSeconds(), s.kills, s.lease, s.slowPercent, s.slowDelay, s.concurrency);
        try (ShippingCounter shipping = new ShippingCounter();
             ChaosRedis redis = new ChaosRedis();
             ChaosDatabase db = new ChaosDatabase(s.schema);
             Connection amqp = amqp()) {
            // An interrupted run (Ctrl+C, a timeout) still stops what it started.
            Thread hook = new Thread(() -> {
                for (DemoInstance i : instances) {
                    i.stop();
                }
                try {
                    redis.close();
                } catch (Exception ignored) {
                    // exiting anyway
                }
            }, "chaos-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                return run(shipping, redis, db, amqp);
            } finally {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
        }
    }

    private ChaosReport run(ShippingCounter shipping, ChaosRedis redis, ChaosDatabase db, Connection amqp) throws Exception {
        {
            db.prepare();
            db.insertStock(orders.skus(), INITIAL_STOCK);
            Channel publish = amqp.createChannel();
            Channel probe = amqp.createChannel();
            declare(publish);
            consumeDeadLetters(amqp.createChannel());
            consumeReservedEvents(amqp.createChannel());
            try {
                startInstances(redis, db, shipping);
                publishStart = System.nanoTime();
                Thread publisher = thread("chaos-publisher", () -> publish(publish));
                Thread faults = thread("chaos-faults", () -> injectFaults(redis, db));
                follow(db, shipping, probe);
                publisher.join();
                faults.join();
                collect(db, shipping);
            } finally {
                for (Thread t : restarts) {
                    t.join(180_000);
                }
                for (DemoInstance i : instances) {
                    i.stop();
                }
                if (report.passed()) {
                    db.deleteStock(orders.prefix);
                    db.deleteStock(orders.invalidPrefix);
                }
            }
        }
        report.write(s.out);
        return report;
    }

    // --- set-up -------------------------------------------------------------------------------

    private Connection amqp() throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        f.setPort(5672);
        return f.newConnection("onceonly-chaos-driver");
    }

    /**
     * The topology the instances declare too (same arguments, so the declarations agree), declared
     * here as well so that nothing published before the instances bind is dropped; plus the audit
     * queue on the dead-letter exchange: the demo consumes its dead-letter queue itself, the driver
     * reads every dead letter from its own copy.
     */
    private void declare(Channel ch) throws IOException {
        boolean quorum = s.queueType.equals("quorum");
        ch.exchangeDeclare(s.queue, "topic", true);
        // A quorum queue with the arguments the connector gives it (the demo's max-attempts 5: a
        // delivery limit of 20) and a quorum dead-letter queue; a classic one without arguments.
        ch.queueDeclare(s.queue, true, false, false, quorum ? Map.of("x-queue-type", "quorum", "x-delivery-limit", 20,
                "x-dead-letter-exchange", dlx(), "x-dead-letter-routing-key", s.queue) : null);
        ch.queueBind(s.queue, s.queue, routingKey());
        ch.exchangeDeclare(dlx(), "fanout", true);
        ch.queueDeclare(dlq(), true, false, false, quorum ? Map.of("x-queue-type", "quorum") : null);
        ch.queueBind(dlq(), dlx(), s.queue);
        ch.queueDeclare(audit(), true, false, false, null);
        ch.queueBind(audit(), dlx(), "");
        ch.queueDeclare(reservedAudit(), true, false, false, null);
        ch.queueBind(reservedAudit(), s.queue, "order.reserved");
        ch.queuePurge(s.queue);
        ch.queuePurge(dlq());
        ch.queuePurge(audit());
        ch.queuePurge(reservedAudit());
        ch.confirmSelect();
        ch.addReturnListener(r -> fail(new IllegalStateException("broker returned a published order as unroutable: " + r.getReplyText())));
    }

    private String dlx() {
        return s.queue + ".dlx";
    }

    private String dlq() {
        return s.queue + ".dlq";
    }

    private String audit() {
        return s.queue + ".dlq.audit";
    }

    /** The driver's own copy of every order.reserved event (the demo consumes its own queue of them). */
    private String reservedAudit() {
        return s.queue + ".reserved.audit";
    }

    private void consumeReservedEvents(Channel ch) throws IOException {
        ch.basicConsume(reservedAudit(), false, "chaos-reserved", new DefaultConsumer(ch) {
            @Override
            public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties props, byte[] body) throws IOException {
                String order = new String(body, StandardCharsets.UTF_8).replaceAll("(?s).*\"orderId\":\"([^\"]*)\".*", "$1");
                reserved.computeIfAbsent(order, o -> new ConcurrentHashMap<>())
                        .merge(String.valueOf(props.getMessageId()), 1, Integer::sum);
                getChannel().basicAck(envelope.getDeliveryTag(), false);
            }
        });
    }

    private void consumeDeadLetters(Channel ch) throws IOException {
        ch.basicConsume(audit(), false, "chaos-audit", new DefaultConsumer(ch) {
            @Override
            public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties props, byte[] body) throws IOException {
                Map<String, Object> h = props.getHeaders() == null ? Map.of() : props.getHeaders();
                deadLetters.add(new ChaosReport.DeadLetter(new String(body, StandardCharsets.UTF_8),
                        String.valueOf(h.get("x-onceonly-outcome")), String.valueOf(h.get("x-onceonly-reason")),
                        String.valueOf(h.get("x-onceonly-attempts")), seconds(System.nanoTime())));
                getChannel().basicAck(envelope.getDeliveryTag(), false);
            }
        });
    }

    private void startInstances(ChaosRedis redis, ChaosDatabase db, ShippingCounter shipping) throws Exception {
        String[] labels = {"a", "b"};
        for (int n = 0; n < 2; n++) {
            int http = s.ports == null ? s.firstHttpPort + 2 * n : s.ports[2 * n];
            int https = s.ports == null ? s.firstHttpPort + 2 * n + 1 : s.ports[2 * n + 1];
            DemoInstance i = new DemoInstance(labels[n], s.servers.get(n), s.wlp, http, https);
            Map<String, String> vars = new LinkedHashMap<>();
            vars.put("demo.embedded-broker", "false");
            vars.put("onceonly.rabbitmq.host", "127.0.0.1");
            vars.put("onceonly.rabbitmq.port", "5672");
            vars.put("demo.exchange", s.queue);
            vars.put("mp.messaging.outgoing.orders-out.exchange.name", s.queue);
            // The consumer taking the orders consumes the run's queue; the other one idles on a queue
            // of its own, bound to a routing key the run does not publish.
            String channel = s.batchSize > 0 ? "orders-batch" : "orders";
            vars.put("demo.queue", s.batchSize > 0 ? s.queue + "-single" : s.queue);
            vars.put("demo.binding", "order.placed");
            vars.put("demo.batch-queue", s.batchSize > 0 ? s.queue : s.queue + "-batch");
            vars.put("demo.batch-binding", "order.placed.batch");
            if (s.batchSize > 0) {
                vars.put("demo.batch-size", Integer.toString(s.batchSize));
            }
            vars.put("mp.messaging.incoming." + channel + ".exchange.name", s.queue);
            vars.put("mp.messaging.incoming." + channel + ".queue.type", s.queueType);
            if (s.concurrency > 1) {
                vars.put("mp.messaging.incoming." + channel + ".concurrency", Integer.toString(s.concurrency));
            }
            vars.put("demo.shipping.url", shipping.url(i.label()));
            vars.put("onceonly.postgresql.url", db.instanceUrl(applicationName(i)));
            i.configure(vars);
            i.clearLogs();
            i.env("ONCEONLY_STORE", "redis").env("ONCEONLY_REDIS_URL", redis.url())
                    .env("ONCEONLY_LEASE", s.lease.toMillis() + "ms")
                    // Rows of a killed instance are swept by the other one 15 s after they were written.
                    .env("ONCEONLY_OUTBOX_SWEEP_INTERVAL", "2s").env("ONCEONLY_OUTBOX_SWEEP_AFTER", "15s")
                    .env("DEMO_SLOW_HANDLER_PERCENT", Double.toString(s.slowPercent))
                    .env("DEMO_SLOW_HANDLER_DELAY", s.slowDelay.toString());
            instances.add(i);
        }
        List<Thread> starting = new ArrayList<>();
        for (DemoInstance i : instances) {
            starting.add(thread("chaos-start-" + i.label(), () -> {
                i.start(true);
                i.awaitReady(READY_LIMIT);
            }));
        }
        for (Thread t : starting) {
            t.join();
        }
        throwIfFailed();
        say("instances up: %s, %s", instances.get(0), instances.get(1));
    }

    /** The routing key the orders are published with: the one the consuming channel's queue is bound to. */
    private String routingKey() {
        return s.batchSize > 0 ? "order.placed.batch" : "order.placed";
    }

    private String applicationName(DemoInstance i) {
        return "onceonly-chaos-" + runId + "-" + i.label();
    }

    // --- publishing ---------------------------------------------------------------------------

    /** The stream over the first 85 % of the window, the held-back copies over the rest; confirms awaited in small batches. */
    private void publish(Channel ch) throws Exception {
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2).build();
        long window = s.publishWindow.toNanos();
        List<ChaosOrders.Message> all = new ArrayList<>(orders.stream);
        all.addAll(orders.delayed);
        int main = orders.stream.size();
        List<Integer> unconfirmed = new ArrayList<>();
        for (int j = 0; j < all.size() && failure.get() == null; j++) {
            long at = j < main ? window * 85 / 100 * j / main
                    : window * 85 / 100 + window * 15 / 100 * (j - main) / Math.max(1, all.size() - main);
            long wait = publishStart + at - System.nanoTime();
            if (wait > 20_000_000 && !unconfirmed.isEmpty()) {
                confirm(ch, unconfirmed);
                wait = publishStart + at - System.nanoTime();
            }
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            ChaosOrders.Message m = all.get(j);
            ch.basicPublish(s.queue, routingKey(), true, props, m.body().getBytes(StandardCharsets.UTF_8));
            if (m.order() >= 0 && ChaosOrders.slow(orders.orderId(m.order()), s.slowPercent)) {
                lastSlowPublishNanos = System.nanoTime();
            }
            unconfirmed.add(m.order());
            if (unconfirmed.size() >= 50) {
                confirm(ch, unconfirmed);
            }
        }
        confirm(ch, unconfirmed);
        publishingDone = true;
    }

    private void confirm(Channel ch, List<Integer> unconfirmed) throws Exception {
        ch.waitForConfirmsOrDie(60_000);
        long now = System.nanoTime();
        for (int order : unconfirmed) {
            if (order >= 0 && confirmedNanos[order] == 0) {
                confirmedNanos[order] = now;
            }
        }
        published.addAndGet(unconfirmed.size());
        unconfirmed.clear();
    }

    // --- faults -------------------------------------------------------------------------------

    private record Planned(double at, String kind, int target) {
    }

    private List<Planned> plan() {
        List<Planned> p = new ArrayList<>();
        p.add(new Planned(0.08, "kill", 0));
        p.add(new Planned(0.20, "redis-kill", -1));
        p.add(new Planned(0.30, "kill", 1));
        p.add(new Planned(0.40, "redis-pause", -1));
        p.add(new Planned(0.50, "connection-close", -1));
        if (s.kills >= 3) {
            p.add(new Planned(0.56, "kill", 0));
        }
        p.add(new Planned(0.66, "postgresql-terminate", -1));
        p.add(new Planned(0.74, "channel-close", -1));
        for (int k = 3; k < s.kills; k++) {
            p.add(new Planned(0.82 + 0.10 * (k - 3) / Math.max(1, s.kills - 3), "kill", k % 2 == 0 ? 0 : 1));
        }
        return p;
    }

    private void injectFaults(ChaosRedis redis, ChaosDatabase db) throws Exception {
        List<Planned> plan = plan();
        report.faultsPlanned = plan.size();
        for (Planned f : plan) {
            long at = publishStart + (long) (s.publishWindow.toNanos() * f.at());
            while (System.nanoTime() < at && failure.get() == null) {
                Thread.sleep(50);
            }
            if (failure.get() != null) {
                return;
            }
            ChaosReport.Fault fault = new ChaosReport.Fault(f.kind(), seconds(at));
            // Every fault hits both instances consuming: wait for restarts to finish (bounded).
            awaitUp(instances.get(0), instances.get(1));
            switch (f.kind()) {
                case "kill" -> kill(instances.get(f.target()), fault);
                case "redis-kill" -> {
                    fault.start(seconds(System.nanoTime()));
                    redis.kill9();
                    Thread.sleep(2000);
                    redis.start();
                    fault.detail("Redis SIGKILL, started again empty on port " + redis.port() + " after 2 s");
                }
                case "redis-pause" -> {
                    Duration pause = s.lease.multipliedBy(3).compareTo(s.lease.plusSeconds(3)) > 0 ? s.lease.multipliedBy(3) : s.lease.plusSeconds(3);
                    // While a slow handler runs: one of the slow orders went out within the last second.
                    long limit = System.nanoTime() + 30_000_000_000L;
                    while (System.nanoTime() - lastSlowPublishNanos > 1_000_000_000L && System.nanoTime() < limit && !publishingDone) {
                        Thread.sleep(20);
                    }
                    fault.start(seconds(System.nanoTime()));
                    redis.pause();
                    Thread.sleep(pause.toMillis());
                    redis.resume();
                    fault.detail("Redis SIGSTOP for " + pause.toMillis() + " ms (lease " + s.lease.toMillis() + " ms), then SIGCONT");
                }
                case "connection-close" -> {
                    awaitConsumers();
                    fault.start(seconds(System.nanoTime()));
                    int n = Broker.closeConsumerConnections(s.queue);
                    fault.detail("rabbitmqctl close_connection: " + n + " consuming connection(s)");
                }
                case "channel-close" -> {
                    awaitConsumers();
                    fault.start(seconds(System.nanoTime()));
                    int n = Broker.closeConsumerChannels(s.queue);
                    fault.detail("broker closed " + n + " consuming channel(s) (406 unknown delivery tag)");
                }
                case "postgresql-terminate" -> {
                    fault.start(seconds(System.nanoTime()));
                    int n = db.terminate("onceonly-chaos-" + runId + "-");
                    fault.detail("pg_terminate_backend: " + n + " backend(s) of the instances");
                }
                default -> throw new IllegalStateException(f.kind());
            }
            fault.end(seconds(System.nanoTime()));
            report.faults.add(fault);
            lastFault = fault.kind + (fault.target == null ? "" : " " + fault.target) + " at " + String.format(Locale.ROOT, "%.1f s", fault.startS);
            faultsDone.incrementAndGet();
        }
        faultsFinished = true;
    }

    private void awaitUp(DemoInstance... these) throws InterruptedException {
        long limit = System.nanoTime() + READY_LIMIT.toNanos();
        while (java.util.Arrays.stream(these).anyMatch(i -> i.state() != DemoInstance.State.UP) && System.nanoTime() < limit) {
            Thread.sleep(100);
        }
    }

    /** Every channel of both instances consuming (after a restart or reconnection), at most 60 s. */
    private void awaitConsumers() throws Exception {
        long limit = System.nanoTime() + 60_000_000_000L;
        while (Broker.consumerChannels(s.queue).size() < 2 * s.concurrency && System.nanoTime() < limit) {
            Thread.sleep(500);
        }
    }

    /** kill -9 (both instances up, see injectFaults); restart at once, in the background. */
    private void kill(DemoInstance victim, ChaosReport.Fault fault) throws Exception {
        long killed = System.nanoTime();
        fault.start(seconds(killed));
        fault.target = victim.label();
        long pid = victim.kill9();
        fault.killNanos = killed;
        fault.detail("SIGKILL to " + victim.server() + " (pid " + pid + "), restarted at once");
        Thread restart = thread("chaos-restart-" + victim.label(), () -> {
            victim.start(false);
            victim.awaitReady(READY_LIMIT);
            fault.readyAgainS = seconds(System.nanoTime()) - fault.startS;
        });
        restarts.add(restart);
    }

    // --- following and checking ---------------------------------------------------------------

    private void follow(ChaosDatabase db, ShippingCounter shipping, Channel probe) throws Exception {
        long deadline = t0 + s.deadline.toNanos();
        long lastChange = System.nanoTime();
        int done = 0;
        int tick = 0;
        long lastCalls = -1;
        int lastReserved = -1;
        while (true) {
            Thread.sleep(500);
            throwIfFailed();
            long now = System.nanoTime();
            Map<String, Long> changed = db.changed(orders.prefix, INITIAL_STOCK);
            for (String sku : changed.keySet()) {
                int i = Integer.parseInt(sku.substring(orders.prefix.length()));
                if (doneNanos[i] == 0) {
                    doneNanos[i] = now;
                    done++;
                    lastChange = now;
                }
            }
            if (shipping.totalCalls() != lastCalls) {
                lastCalls = shipping.totalCalls();
                lastChange = now;
            }
            int ready = probe.queueDeclarePassive(s.queue).getMessageCount();
            int dlq = probe.queueDeclarePassive(dlq()).getMessageCount();
            if (++tick % 2 == 0) {
                StringBuilder states = new StringBuilder();
                for (DemoInstance i : instances) {
                    states.append(' ').append(i.label()).append(':').append(i.state());
                }
                System.out.printf(Locale.ROOT, "[%s] %5.1f s  published %,d/%,d  done %,d/%,d  shipping calls %,d  queue %,d  dead letters %d "
                                + "%s  faults %d/%d (last: %s)%n", s.label, seconds(now), published.get(), orders.messages(), done, s.orders,
                        shipping.totalCalls(), ready, deadLetters.size(), states, faultsDone.get(), report.faultsPlanned, lastFault);
            }
            boolean allUp = instances.stream().allMatch(i -> i.state() == DemoInstance.State.UP);
            boolean restartsOver = restarts.stream().noneMatch(Thread::isAlive);
            if (reserved.size() != lastReserved) {
                lastReserved = reserved.size();
                lastChange = now;
            }
            // Dead letters stay in the dead-letter queue for an operator (the demo no longer consumes it):
            // drained when it holds every dead letter the audit copy saw, and those are all there are.
            if (publishingDone && faultsFinished && restartsOver && allUp && done == s.orders && ready == 0
                    && dlq == deadLetters.size() && deadLetters.size() >= orders.invalid.size() && reserved.size() >= s.orders && now - lastChange > QUIET.toNanos()) {
                report.drainedS = seconds(now);
                return;
            }
            if (now > deadline) {
                report.timedOut = "not drained within " + s.deadline.toSeconds() + " s: " + done + " of " + s.orders
                        + " orders done, " + reserved.size() + " with an order.reserved event, " + ready + " ready in " + s.queue + ", publishing " + (publishingDone ? "done" : "running")
                        + ", faults " + (faultsFinished ? "done" : "running");
                say(report.timedOut);
                return;
            }
        }
    }

    private void collect(ChaosDatabase db, ShippingCounter shipping) throws Exception {
        Map<String, Long> stock = db.changed(orders.prefix, INITIAL_STOCK);
        Map<String, Long> invalidStock = db.changed(orders.invalidPrefix, INITIAL_STOCK);
        report.stock = stock;
        report.invalidStockChanged = invalidStock.size();
        report.shipping = shipping;
        report.deadLetters = List.copyOf(deadLetters);
        report.reserved = Map.copyOf(reserved);
        report.queueMessages = TestRabbit.total(s.queue);
        report.dlqMessages = TestRabbit.total(dlq());
        // The ledger's msg_id is the claim key, which is also the key the handler passed on (Idempotency-Key).
        // The single-message consumer sends its guard key as the shipping call's Idempotency-Key; the batch
        // consumer has no guard key per message and sends a key of its own: its rows are counted by consumer.
        report.ledgerRows = s.batchSize > 0 ? db.ledgerRowsOf("inventory-batch")
                : db.ledgerRows(List.copyOf(shipping.keys().keySet()));
        for (DemoInstance i : instances) {
            report.logIds.put(i.label(), i.countLogIds());
        }
        // Recovery after each kill -9: from the kill to the moment every valid order published
        // before it was done (its stock row changed; seen by a poll every 0.5 s).
        for (ChaosReport.Fault f : report.faults) {
            if (f.killNanos == 0) {
                continue;
            }
            long last = f.killNanos;
            int outstanding = 0;
            for (int i = 0; i < s.orders; i++) {
                if (confirmedNanos[i] != 0 && confirmedNanos[i] <= f.killNanos && (doneNanos[i] == 0 || doneNanos[i] > f.killNanos)) {
                    outstanding++;
                    last = Math.max(last, doneNanos[i] == 0 ? Long.MAX_VALUE / 2 : doneNanos[i]);
                }
            }
            f.outstanding = outstanding;
            f.recoveryS = (last - f.killNanos) / 1e9;
            // Handlers the kill cut off between their shipping call and their commit: the victim
            // called shipping for the order before the kill, and the order was called again after it
            // (a committed order is never called again). Their redo waits for the dead holder's lease.
            long redone = 0;
            for (int i = 0; i < s.orders; i++) {
                List<ShippingCounter.Call> calls = shipping.calls(orders.orderId(i));
                boolean before = calls.stream().anyMatch(c -> c.instance().equals(f.target) && c.nanos() <= f.killNanos);
                java.util.Optional<ShippingCounter.Call> after = calls.stream().filter(c -> c.nanos() > f.killNanos).findFirst();
                if (before && after.isPresent() && calls.stream().filter(c -> c.nanos() <= f.killNanos).allMatch(c -> c.instance().equals(f.target))) {
                    f.cutOff++;
                    redone = Math.max(redone, after.get().nanos() - f.killNanos);
                }
            }
            if (f.cutOff > 0) {
                f.redoneS = redone / 1e9;
            }
        }
        report.evaluate();
        System.out.print(report.table());
    }

    // --- plumbing -----------------------------------------------------------------------------

    private interface Body {
        void run() throws Exception;
    }

    private Thread thread(String name, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                fail(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private void fail(Throwable e) {
        if (failure.compareAndSet(null, e)) {
            say("FAILED: %s", e);
        }
    }

    private void throwIfFailed() throws Exception {
        Throwable e = failure.get();
        if (e != null) {
            throw new IllegalStateException("chaos run aborted: " + e, e);
        }
    }

    double seconds(long nanos) {
        return (nanos - (publishStart == 0 ? t0 : publishStart)) / 1e9;
    }

    private void say(String format, Object... args) {
        System.out.printf(Locale.ROOT, "[%s] " + format + "%n", prepend(s.label, args));
    }

    private static Object[] prepend(String first, Object[] rest) {
        Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

}
