package dev.onceonly.bench;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Text of {@link LoadRun}'s results: the block after one run, the table over several. */
final class LoadSummary {

    /** Issue 16's targets, guarded against unguarded: throughput at 0 % duplicates ... */
    static final double TARGET_RATE_NO_DUPLICATES = 0.95;
    /** ... machine CPU per message at 0 % duplicates ... */
    static final double TARGET_CPU_NO_DUPLICATES = 1.05;
    /** ... and throughput at 20 % duplicates, where the guard saves the duplicates' work. */
    static final double TARGET_RATE_20_PERCENT = 1.15;
    /** Guarded against the seed article's hand-written consumer: msg/s at 0 % duplicates. */
    static final double SEED_RATE_NO_DUPLICATES = 0.97;
    /** The same with duplicates, where skipping them early is what both do. */
    static final double SEED_RATE_DUPLICATES = 1.00;
    /** Guarded against seed: machine CPU per message. */
    static final double SEED_CPU = 1.03;
    /** The outbox against publishing with a confirm from the handler: msg/s. */
    static final double DIRECT_RATE = 0.90;
    /** The outbox against direct publishing: machine CPU per message. */
    static final double DIRECT_CPU = 1.15;
    /** Guarded batches ({@code batched}) against the unguarded single-message consumer at 20 % duplicates: msg/s. */
    static final double BATCHED_RATE_20_PERCENT = 1.5;
    /** The same: machine CPU per message. */
    static final double BATCHED_CPU_20_PERCENT = 0.7;

    private LoadSummary() {
    }

    static String block(JsonObject r) {
        JsonObject t = r.getJsonObject("timing");
        JsonObject call = t.getJsonObject("callMicros");
        JsonObject guard = t.getJsonObject("guardMicros");
        JsonObject o = r.getJsonObject("outcomes");
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "[%s] %,d messages (%,d orders) consumed, %.1f s from first publish%n",
                r.getString("label"), r.getInt("messages"), r.getInt("distinctOrders"), r.getJsonNumber("wallSeconds").doubleValue()));
        b.append(String.format(Locale.ROOT, "  consumer  %,d msg/s over %.1f s; call p50 %.1f us, p99 %.1f us, max %.1f us (%,d calls, %,d threw)%n",
                t.getInt("perSecond"), t.getInt("windowMillis") / 1000.0, num(call, "p50"), num(call, "p99"), num(call, "max"),
                call.getInt("count"), t.getInt("threw")));
        b.append(guard.getInt("count") == 0 ? "  guard     off\n" : String.format(Locale.ROOT,
                "  guard     p50 %.1f us, p99 %.1f us, max %.1f us (%,d messages)%n",
                num(guard, "p50"), num(guard, "p99"), num(guard, "max"), guard.getInt("count")));
        b.append(String.format(Locale.ROOT, "  machine   CPU %.1f %% busy (all CPUs, all processes), %,d us of CPU per message%s%n",
                num(r, "machineCpuBusyPercent"), r.getInt("machineCpuMicrosPerMessage"), byProcess(r, "cpuMicrosPerMessageByProcess")));
        if (r.containsKey("machineCpuMicrosPerMessageAboveIdle")) {
            b.append(String.format(Locale.ROOT, "  idle      CPU %.1f %% busy with the queue empty (us per second%s); above it %,d us of CPU per message%n",
                    num(r, "idleMachineCpuBusyPercent"), byProcess(r, "idleCpuMicrosPerSecondByProcess"),
                    r.getInt("machineCpuMicrosPerMessageAboveIdle")));
        }
        b.append(String.format(Locale.ROOT, "  outcomes  processed %,d, duplicate %,d by Redis + %,d by ledger, busy %,d, failed %,d, retry %,d, conflict %,d, rejected %,d, dead-lettered %,d%n",
                o.getInt("processed"), o.getInt("duplicateByClaimStore"), o.getInt("duplicateByLedger"), o.getInt("busy"),
                o.getInt("failed"), o.getInt("retry"), o.getInt("conflict"), o.getInt("rejected"), o.getInt("deadLettered")));
        b.append(String.format(Locale.ROOT, "  effects   %,d shipping calls for %,d orders (at most %d per order)%n",
                r.getInt("shippingCalls"), r.getInt("shippedOrders"), r.getInt("maxShipmentsPerOrder")));
        return b.toString();
    }

    /** {@code ", java 1422, beam.smp 462, ..."}: a result's per-process CPU figures, largest first as written. */
    private static String byProcess(JsonObject r, String field) {
        StringBuilder list = new StringBuilder();
        r.getJsonObject(field).forEach((name, us) -> list.append(", ").append(name).append(' ').append(us));
        return list.toString();
    }

    /**
     * Markdown table of all runs, then guarded/unguarded throughput per round and their median. A
     * {@code batched} run's call latencies are those of a batch's call.
     */
    static String table(List<JsonObject> runs) {
        StringBuilder b = new StringBuilder();
        b.append("| round | mode | messages | msg/s | call p50 µs | call p99 µs | guard p50 µs | guard p99 µs | machine CPU µs/msg | above idle µs/msg | shipping calls / orders |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        Map<String, Map<String, Integer>> rateByRound = new TreeMap<>();
        Map<String, Map<String, Integer>> cpuByRound = new TreeMap<>();
        Map<String, Map<String, Integer>> aboveIdleByRound = new TreeMap<>();
        for (JsonObject r : runs) {
            JsonObject t = r.getJsonObject("timing");
            JsonObject call = t.getJsonObject("callMicros");
            JsonObject guard = t.getJsonObject("guardMicros");
            boolean guarded = guard.getInt("count") > 0;
            boolean idleMeasured = r.containsKey("machineCpuMicrosPerMessageAboveIdle"); // not in runs before 2026-12-02
            b.append(String.format(Locale.ROOT, "| %s | %s | %,d | %,d | %.1f | %.1f | %s | %s | %,d | %s | %,d / %,d |%n",
                    r.getString("round"), r.getString("label"), r.getInt("messages"), t.getInt("perSecond"),
                    num(call, "p50"), num(call, "p99"),
                    guarded ? String.format(Locale.ROOT, "%.1f", num(guard, "p50")) : "–",
                    guarded ? String.format(Locale.ROOT, "%.1f", num(guard, "p99")) : "–",
                    r.getInt("machineCpuMicrosPerMessage"),
                    idleMeasured ? String.format(Locale.ROOT, "%,d", r.getInt("machineCpuMicrosPerMessageAboveIdle")) : "–",
                    r.getInt("shippingCalls"), r.getInt("shippedOrders")));
            if (idleMeasured) {
                aboveIdleByRound.computeIfAbsent(r.getString("round"), k -> new TreeMap<>()).put(r.getString("label"),
                        r.getInt("machineCpuMicrosPerMessageAboveIdle"));
            }
            rateByRound.computeIfAbsent(r.getString("round"), k -> new TreeMap<>()).put(r.getString("label"), t.getInt("perSecond"));
            cpuByRound.computeIfAbsent(r.getString("round"), k -> new TreeMap<>()).put(r.getString("label"),
                    r.getInt("machineCpuMicrosPerMessage"));
        }
        List<Double> ratios = new ArrayList<>();
        List<Double> cpuRatiosUnguarded = new ArrayList<>();
        List<Double> aboveIdleRatios = new ArrayList<>();
        b.append('\n');
        rateByRound.forEach((round, rates) -> {
            Integer g = rates.get("guarded");
            Integer u = rates.get("unguarded");
            if (g != null && u != null && u > 0) {
                int gc = cpuByRound.get(round).get("guarded");
                int uc = cpuByRound.get(round).get("unguarded");
                double ratio = (double) g / u;
                ratios.add(ratio);
                cpuRatiosUnguarded.add((double) gc / uc);
                b.append(String.format(Locale.ROOT, "round %s: guarded/unguarded msg/s = %,d / %,d = %.3f; machine CPU per message %,d / %,d µs = %.3f",
                        round, g, u, ratio, gc, uc, (double) gc / uc));
                Map<String, Integer> aboveIdle = aboveIdleByRound.getOrDefault(round, Map.of());
                if (aboveIdle.containsKey("guarded") && aboveIdle.containsKey("unguarded")) {
                    int ga = aboveIdle.get("guarded");
                    int ua = aboveIdle.get("unguarded");
                    aboveIdleRatios.add((double) ga / ua);
                    b.append(String.format(Locale.ROOT, ", above idle %,d / %,d µs = %.3f", ga, ua, (double) ga / ua));
                }
                b.append('\n');
            }
        });
        // With BENCH_MODES="guarded outbox database": what each variant costs per message beside the guarded run.
        Map<String, List<Double>> rateRatios = new TreeMap<>();
        Map<String, List<Double>> cpuRatios = new TreeMap<>();
        rateByRound.forEach((round, rates) -> {
            Integer g = rates.get("guarded");
            Integer gc = cpuByRound.get(round).get("guarded");
            rates.forEach((label, rate) -> {
                // The hand-written floors have their own comparison below, the other way round.
                if (g == null || g == 0 || gc == null || gc == 0 || List.of("guarded", "unguarded", "seed", "direct").contains(label)) {
                    return;
                }
                int cpu = cpuByRound.get(round).get(label);
                rateRatios.computeIfAbsent(label, k -> new ArrayList<>()).add((double) rate / g);
                cpuRatios.computeIfAbsent(label, k -> new ArrayList<>()).add((double) cpu / gc);
                b.append(String.format(Locale.ROOT, "round %s: %s/guarded msg/s = %,d / %,d = %.3f; machine CPU per message %,d / %,d µs = %.3f%n",
                        round, label, rate, g, (double) rate / g, cpu, gc, (double) cpu / gc));
            });
        });
        rateRatios.forEach((label, list) -> b.append(String.format(Locale.ROOT,
                "median %s/guarded: msg/s %.3f, machine CPU per message %.3f, over %d round(s)%n",
                label, median(list), median(cpuRatios.get(label)), list.size())));
        if (!ratios.isEmpty()) {
            double rate = median(ratios);
            double cpu = median(cpuRatiosUnguarded);
            b.append(String.format(Locale.ROOT, "median guarded/unguarded over %d round(s): msg/s %.3f, machine CPU per message %.3f%s%n",
                    ratios.size(), rate, cpu, aboveIdleRatios.size() == ratios.size()
                            ? String.format(Locale.ROOT, ", above idle %.3f", median(aboveIdleRatios)) : ""));
            int duplicatePercent = duplicatePercent(runs);
            if (duplicatePercent == 0) {
                b.append(String.format(Locale.ROOT, "targets at 0 %% duplicates: msg/s >= %.2f %s, CPU per message <= %.2f %s%n",
                        TARGET_RATE_NO_DUPLICATES, verdict(rate >= TARGET_RATE_NO_DUPLICATES),
                        TARGET_CPU_NO_DUPLICATES, verdict(cpu <= TARGET_CPU_NO_DUPLICATES)));
            } else if (duplicatePercent == 20) {
                b.append(String.format(Locale.ROOT, "target at 20 %% duplicates: msg/s >= %.2f %s%n",
                        TARGET_RATE_20_PERCENT, verdict(rate >= TARGET_RATE_20_PERCENT)));
            }
        }
        int duplicatePercent = duplicatePercent(runs);
        floor(b, rateByRound, cpuByRound, "guarded", "seed", duplicatePercent == 0 ? SEED_RATE_NO_DUPLICATES : SEED_RATE_DUPLICATES,
                SEED_CPU);
        floor(b, rateByRound, cpuByRound, "outbox", "direct", DIRECT_RATE, DIRECT_CPU);
        if (duplicatePercent == 20) {
            floor(b, rateByRound, cpuByRound, "batched", "unguarded", BATCHED_RATE_20_PERCENT, BATCHED_CPU_20_PERCENT);
        }
        return b.toString();
    }

    /**
     * {@code mode} against the run it is held to ({@code floor}: a hand-written consumer it must stay
     * close to, or the unguarded one batches must beat): per round, then the medians with their targets (msg/s at least {@code rateTarget} of the floor's, machine CPU per
     * message at most {@code cpuTarget} of it). Nothing when the runs have not both.
     */
    private static void floor(StringBuilder b, Map<String, Map<String, Integer>> rateByRound, Map<String, Map<String, Integer>> cpuByRound,
                              String mode, String floor, double rateTarget, double cpuTarget) {
        List<Double> rates = new ArrayList<>();
        List<Double> cpus = new ArrayList<>();
        rateByRound.forEach((round, r) -> {
            Integer m = r.get(mode);
            Integer f = r.get(floor);
            if (m != null && f != null && f > 0) {
                int mc = cpuByRound.get(round).get(mode);
                int fc = cpuByRound.get(round).get(floor);
                rates.add((double) m / f);
                cpus.add((double) mc / fc);
                b.append(String.format(Locale.ROOT, "round %s: %s/%s msg/s = %,d / %,d = %.3f; machine CPU per message %,d / %,d µs = %.3f%n",
                        round, mode, floor, m, f, (double) m / f, mc, fc, (double) mc / fc));
            }
        });
        if (!rates.isEmpty()) {
            double rate = median(rates);
            double cpu = median(cpus);
            b.append(String.format(Locale.ROOT, "median %s/%s over %d round(s): msg/s %.3f (target >= %.2f %s), machine CPU per message %.3f (target <= %.2f %s)%n",
                    mode, floor, rates.size(), rate, rateTarget, verdict(rate >= rateTarget), cpu, cpuTarget, verdict(cpu <= cpuTarget)));
        }
    }

    /** The share of duplicates the runs published, in whole percent (the same in every run of a table). */
    private static int duplicatePercent(List<JsonObject> runs) {
        JsonObject r = runs.get(0);
        return (int) Math.round(100.0 * (r.getInt("messages") - r.getInt("distinctOrders")) / r.getInt("messages"));
    }

    private static String verdict(boolean met) {
        return met ? "met" : "MISSED";
    }

    /**
     * The {@code /api/stats} of several instances of the demo as one: counts summed, the latency
     * window as the longest of theirs (they run side by side), the rate over it, and each percentile
     * as the highest of the instances' (percentiles cannot be summed).
     */
    static JsonObject merge(List<JsonObject> stats) {
        JsonObjectBuilder total = Json.createObjectBuilder();
        stats.get(0).forEach((name, value) -> {
            if (value.getValueType() == JsonValue.ValueType.NUMBER) {
                total.add(name, stats.stream().mapToLong(s -> s.getJsonNumber(name).longValue()).sum());
            }
        });
        List<JsonObject> timings = stats.stream().map(s -> s.getJsonObject("timing")).toList();
        long returned = timings.stream().mapToLong(t -> t.getJsonNumber("returned").longValue()).sum();
        long windowMillis = timings.stream().mapToLong(t -> t.getJsonNumber("windowMillis").longValue()).max().orElse(0);
        JsonObjectBuilder timing = Json.createObjectBuilder()
                .add("returned", returned)
                .add("threw", timings.stream().mapToLong(t -> t.getJsonNumber("threw").longValue()).sum())
                .add("windowMillis", windowMillis)
                .add("perSecond", windowMillis == 0 ? 0 : Math.round(returned * 1000.0 / windowMillis));
        for (String histogram : List.of("callMicros", "guardMicros")) {
            List<JsonObject> each = timings.stream().map(t -> t.getJsonObject(histogram)).toList();
            JsonObjectBuilder h = Json.createObjectBuilder()
                    .add("count", each.stream().mapToLong(e -> e.getJsonNumber("count").longValue()).sum());
            for (String percentile : List.of("p50", "p99", "max")) {
                h.add(percentile, each.stream().mapToDouble(e -> num(e, percentile)).max().orElse(0));
            }
            timing.add(histogram, h);
        }
        return total.add("timing", timing).build();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static double num(JsonObject o, String key) {
        return o.getJsonNumber(key).doubleValue();
    }
}
