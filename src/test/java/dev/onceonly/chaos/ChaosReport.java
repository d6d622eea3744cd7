package dev.onceonly.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/** What a chaos run did and found, its checks, and the table it prints. */
public final class ChaosReport {

    /** One injected fault; times in seconds from the first publish. */
    public static final class Fault {
        final String kind;
        final double plannedS;
        String target;
        double startS;
        double endS;
        String detail = "";
        long killNanos;
        double readyAgainS = Double.NaN;
        int outstanding;
        double recoveryS = Double.NaN;
        int cutOff;
        double redoneS = Double.NaN;

        Fault(String kind, double plannedS) {
            this.kind = kind;
            this.plannedS = plannedS;
        }

        void start(double s) {
            startS = s;
        }

        void end(double s) {
            endS = s;
        }

        void detail(String d) {
            detail = d;
        }
    }

    /** A dead letter as the driver's copy of the dead-letter exchange received it. */
    public record DeadLetter(String body, String outcome, String reason, String attempts, double atS) {
    }

    private final ChaosDriver.Settings settings;
    private final String runId;
    private final String started = Instant.now().toString();
    ChaosOrders orders;
    final List<Fault> faults = new ArrayList<>();
    int faultsPlanned;
    double drainedS = Double.NaN;
    String timedOut;
    Map<String, Long> stock = Map.of();
    int invalidStockChanged;
    ShippingCounter shipping;
    List<DeadLetter> deadLetters = List.of();
    int queueMessages = -1;
    int dlqMessages = -1;
    int ledgerRows = -1;
    /** order id → message id → copies of its order.reserved events (sent through the outbox). */
    Map<String, Map<String, Integer>> reserved = Map.of();
    final Map<String, Map<String, Integer>> logIds = new TreeMap<>();

    // Evaluated.
    int exact;
    int lost;
    int doubled;
    int otherEffect;
    int shippedOnce;
    int notShipped;
    int shippedTwice;
    int callsForValid;
    /** Instance label → valid orders whose first shipping call it made (how the queue's work was split). */
    final Map<String, Integer> firstCallsByInstance = new TreeMap<>();
    int effectiveShipments;
    int ordersCalledAgain;
    int maxCalls;
    int invalidCalls;
    int validDeadLettered;
    int unexplainedDeadLetters;
    int invalidMissing;
    int invalidTwice;
    int reservedOnce;
    int reservedMissing;
    int reservedSeveralIds;
    int reservedCopies;
    int reservedForInvalid;
    final Map<String, String> deadLetterKinds = new TreeMap<>();
    final List<String> violations = new ArrayList<>();
    private final List<String> examples = new ArrayList<>();

    ChaosReport(ChaosDriver.Settings settings, String runId) {
        this.settings = settings;
        this.runId = runId;
    }

    public boolean passed() {
        return timedOut == null && orders != null && shipping != null && violations.isEmpty();
    }

    public List<String> violations() {
        return violations;
    }

    void evaluate() {
        for (int i = 0; i < orders.count; i++) {
            String id = orders.orderId(i);
            long taken = ChaosDriver.INITIAL_STOCK - stock.getOrDefault(id, ChaosDriver.INITIAL_STOCK);
            int q = orders.quantity(i);
            if (taken == q) {
                exact++;
            } else if (taken == 0) {
                lost++;
                example("lost: " + id);
            } else if (taken % q == 0 && taken > q) {
                doubled++;
                example("taken " + taken / q + " times: " + id);
            } else {
                otherEffect++;
                example("took " + taken + " of " + q + ": " + id);
            }
            Map<String, Integer> events = reserved.getOrDefault(id, Map.of());
            if (events.isEmpty()) {
                reservedMissing++;
                example("no order.reserved event: " + id);
            } else if (events.size() > 1) {
                reservedSeveralIds++;
                example("order.reserved under " + events.size() + " message ids: " + id);
            } else {
                reservedOnce++;
            }
            reservedCopies += events.values().stream().mapToInt(n -> n - 1).sum();
            int ships = shipping.shipments(id);
            List<ShippingCounter.Call> calls = shipping.calls(id);
            callsForValid += calls.size();
            if (!calls.isEmpty()) {
                firstCallsByInstance.merge(calls.get(0).instance(), 1, Integer::sum);
            }
            effectiveShipments += ships;
            maxCalls = Math.max(maxCalls, calls.size());
            ordersCalledAgain += calls.size() > 1 ? 1 : 0;
            if (ships == 1) {
                shippedOnce++;
            } else if (ships == 0) {
                notShipped++;
                example("not shipped: " + id);
            } else {
                shippedTwice++;
                example("shipped " + ships + " times: " + id);
            }
        }
        Map<String, ChaosOrders.Message> invalidByBody = new HashMap<>();
        Map<String, Integer> invalidSeen = new HashMap<>();
        for (ChaosOrders.Message m : orders.invalid) {
            invalidByBody.put(m.body(), m);
            invalidCalls += shipping.calls(idOf(m)).size();
        }
        Map<String, Integer> validBodies = new HashMap<>();
        for (int i = 0; i < orders.count; i++) {
            validBodies.put(ChaosOrders.json(orders.orderId(i), orders.orderId(i), orders.quantity(i)), i);
        }
        for (DeadLetter d : deadLetters) {
            ChaosOrders.Message m = invalidByBody.get(d.body());
            if (m != null) {
                invalidSeen.merge(d.body(), 1, Integer::sum);
                boolean expected = d.outcome().equals(m.invalid().outcome) && d.reason() != null && !d.reason().equals("null")
                        && (!m.invalid().outcome.equals("FAILED") || d.reason().contains("InvalidOrderException"));
                deadLetterKinds.merge(m.invalid().name() + " -> " + d.outcome() + " after " + d.attempts() + " attempt(s): " + shorten(d.reason()),
                        "1", (a, b) -> Integer.toString(Integer.parseInt(a) + 1));
                if (!expected) {
                    unexplainedDeadLetters++;
                    example("dead letter of " + m.invalid() + " with outcome " + d.outcome() + ", reason " + d.reason());
                }
            } else if (validBodies.containsKey(d.body())) {
                validDeadLettered++;
                example("valid order dead-lettered: " + orders.orderId(validBodies.get(d.body())) + " " + d.outcome() + " " + d.reason());
            } else {
                unexplainedDeadLetters++;
                example("unknown dead letter: " + shorten(d.body()));
            }
        }
        for (ChaosOrders.Message m : orders.invalid) {
            int n = invalidSeen.getOrDefault(m.body(), 0);
            if (n == 0) {
                invalidMissing++;
                example("invalid order not dead-lettered: " + m.invalid());
            } else if (n > 1) {
                invalidTwice++;
            }
        }
        for (ChaosOrders.Message m : orders.invalid) {
            reservedForInvalid += reserved.containsKey(idOf(m)) ? 1 : 0;
        }
        check(reservedMissing == 0, reservedMissing + " order(s) without their order.reserved event (outbox)");
        check(reservedSeveralIds == 0, reservedSeveralIds + " order(s) with order.reserved events under several message ids");
        check(reservedForInvalid == 0, reservedForInvalid + " invalid order(s) with an order.reserved event");
        check(timedOut == null, timedOut);
        check(lost == 0, lost + " order(s) lost (no stock taken)");
        check(doubled == 0, doubled + " order(s) taken more than once");
        check(otherEffect == 0, otherEffect + " order(s) with a wrong stock effect");
        check(invalidStockChanged == 0, invalidStockChanged + " invalid order(s) changed stock");
        check(notShipped == 0, notShipped + " order(s) never shipped");
        check(shippedTwice == 0, shippedTwice + " order(s) shipped more than once (effective shipments)");
        check(shipping.callsWithoutKey() == 0, shipping.callsWithoutKey() + " shipping call(s) without Idempotency-Key");
        check(invalidCalls == 0, invalidCalls + " shipping call(s) for invalid orders");
        check(validDeadLettered == 0, validDeadLettered + " valid order(s) dead-lettered");
        check(unexplainedDeadLetters == 0, unexplainedDeadLetters + " dead letter(s) not explained by an invalid order and its reason");
        check(invalidMissing == 0, invalidMissing + " invalid order(s) never dead-lettered");
        check(ledgerRows == orders.count, ledgerRows + " ledger row(s) for the " + orders.count + " orders");
        check(queueMessages == 0, queueMessages + " message(s) left in " + settings.queue + " (ready or unacked)");
        check(dlqMessages == deadLetters.size(), settings.queue + ".dlq holds " + dlqMessages + " message(s), its audit copy saw "
                + deadLetters.size() + " dead letter(s): every dead letter waits there for an operator, once");
    }

    private static String idOf(ChaosOrders.Message m) {
        return m.body().replaceAll("(?s).*\"orderId\":\"([^\"]*)\".*", "$1");
    }

    private void check(boolean ok, String violation) {
        if (!ok) {
            violations.add(violation);
        }
    }

    private void example(String e) {
        if (examples.size() < 20) {
            examples.add(e);
        }
    }

    private static String shorten(String s) {
        if (s == null) {
            return "null";
        }
        String t = s.replaceAll("\\s+", " ");
        return t.length() <= 110 ? t : t.substring(0, 110) + "...";
    }

    public String verdict() {
        return passed()
                ? String.format(Locale.ROOT, "PASS: %,d orders, stock taken exactly once for every one, 0 lost, 0 double, 0 double shipments, "
                + "%d dead letters all explained, one order.reserved message id per order, queues empty", orders.count, deadLetters.size())
                : "FAIL: " + String.join("; ", violations.isEmpty() && timedOut != null ? List.of(timedOut) : violations);
    }

    public String table() {
        StringBuilder t = new StringBuilder();
        t.append(String.format(Locale.ROOT, "%n## Chaos run %s (%s), started %s%n%n", runId, settings.label, started));
        t.append(String.format(Locale.ROOT, "%,d orders + %,d copies (%,d held back to the end) + %d invalid = %,d messages over %d s; "
                        + "lease %d ms; %.1f %% of handlers slowed by %d ms; %d channel(s) per instance on a %s queue; drained at %.1f s%n%n",
                orders.count, orders.copies, orders.delayed.size(), orders.invalid.size(), orders.messages(), settings.publishWindow.toSeconds(),
                settings.lease.toMillis(), settings.slowPercent, settings.slowDelay.toMillis(), settings.concurrency, settings.queueType, drainedS));
        t.append("| fault | at s | target | what | back up after s | orders outstanding | recovery s | cut off after shipping / redone after s |\n"
                + "|---|---|---|---|---|---|---|---|\n");
        for (Fault f : faults) {
            t.append(String.format(Locale.ROOT, "| %s | %.1f | %s | %s | %s | %s | %s | %s |%n", f.kind, f.startS, f.target == null ? "" : f.target,
                    f.detail, Double.isNaN(f.readyAgainS) ? "" : String.format(Locale.ROOT, "%.1f", f.readyAgainS),
                    f.killNanos == 0 ? "" : Integer.toString(f.outstanding),
                    Double.isNaN(f.recoveryS) ? "" : String.format(Locale.ROOT, "%.1f", f.recoveryS),
                    f.killNanos == 0 ? "" : f.cutOff + (Double.isNaN(f.redoneS) ? "" : String.format(Locale.ROOT, " / %.1f", f.redoneS))));
        }
        t.append("\n| check | count |\n|---|---|\n");
        row(t, "orders with stock taken exactly once", exact);
        row(t, "lost (stock never taken)", lost);
        row(t, "double (stock taken more than once)", doubled);
        row(t, "other wrong stock effects", otherEffect);
        row(t, "invalid orders that changed stock", invalidStockChanged);
        row(t, "shipping calls (all)", shipping.totalCalls());
        row(t, "shipping calls for valid orders", callsForValid);
        row(t, "valid orders by the instance that first called shipping (the split)", firstCallsByInstance.toString());
        row(t, "orders called more than once / most calls for one order", ordersCalledAgain + " / " + maxCalls);
        row(t, "effective shipments (first call per Idempotency-Key)", effectiveShipments);
        row(t, "orders shipped exactly once", shippedOnce);
        row(t, "orders never shipped", notShipped);
        row(t, "orders shipped more than once", shippedTwice);
        row(t, "calls without Idempotency-Key", shipping.callsWithoutKey());
        row(t, settings.batchSize > 0 ? "ledger rows of the batch consumer" : "ledger rows for the shipped keys", ledgerRows);
        row(t, "orders with one order.reserved message id (outbox)", reservedOnce);
        row(t, "orders without / with several message ids", reservedMissing + " / " + reservedSeveralIds);
        row(t, "extra copies of an id (relay died between confirm and mark; the consumer deduplicates them)", reservedCopies);
        row(t, "dead letters (all)", deadLetters.size());
        row(t, "valid orders dead-lettered", validDeadLettered);
        row(t, "invalid orders dead-lettered / never / more than once", (orders.invalid.size() - invalidMissing) + " / " + invalidMissing + " / " + invalidTwice);
        row(t, "dead letters not explained", unexplainedDeadLetters);
        row(t, "messages left in the queue / its dead-letter queue", queueMessages + " / " + dlqMessages);
        t.append("\nDead letters by kind (outcome, attempts, reason):\n\n");
        deadLetterKinds.forEach((k, n) -> t.append("- ").append(n).append(" × ").append(k).append('\n'));
        t.append("\nLog IDs per instance (every life of it):\n\n| ID | a | b |\n|---|---|---|\n");
        TreeSet<String> ids = new TreeSet<>();
        logIds.values().forEach(m -> ids.addAll(m.keySet()));
        for (String id : ids) {
            t.append("| ").append(id).append(" | ").append(logIds.getOrDefault("a", Map.of()).getOrDefault(id, 0))
                    .append(" | ").append(logIds.getOrDefault("b", Map.of()).getOrDefault(id, 0)).append(" |\n");
        }
        if (!examples.isEmpty()) {
            t.append("\nExamples:\n\n");
            examples.forEach(e -> t.append("- ").append(e).append('\n'));
        }
        t.append("\n**").append(verdict()).append("**\n");
        return t.toString();
    }

    private static void row(StringBuilder t, String what, Object n) {
        t.append("| ").append(what).append(" | ").append(n instanceof Integer i ? String.format(Locale.ROOT, "%,d", i) : n).append(" |\n");
    }

    void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        if (orders != null && shipping != null) {
            Files.writeString(dir.resolve("chaos-" + settings.label + "-" + runId + ".md"), table());
        }
    }
}
