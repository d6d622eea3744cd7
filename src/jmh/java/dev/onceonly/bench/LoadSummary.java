package dev.onceonly.bench;

import jakarta.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Text of {@link LoadRun}'s results: the block after one run, the table over several. */
final class LoadSummary {

    /** The target of issue 7: guarded throughput at least this share of the unguarded one. */
    static final double TARGET_RATIO = 0.90;

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
        StringBuilder byProcess = new StringBuilder();
        r.getJsonObject("cpuMicrosPerMessageByProcess").forEach((name, us) -> byProcess.append(", ").append(name).append(' ').append(us));
        b.append(String.format(Locale.ROOT, "  machine   CPU %.1f %% busy (all CPUs, all processes), %,d us of CPU per message%s%n",
                num(r, "machineCpuBusyPercent"), r.getInt("machineCpuMicrosPerMessage"), byProcess));
        b.append(String.format(Locale.ROOT, "  outcomes  processed %,d, duplicate %,d by Redis + %,d by ledger, busy %,d, failed %,d, retry %,d, conflict %,d, rejected %,d, dead-lettered %,d%n",
                o.getInt("processed"), o.getInt("duplicateByClaimStore"), o.getInt("duplicateByLedger"), o.getInt("busy"),
                o.getInt("failed"), o.getInt("retry"), o.getInt("conflict"), o.getInt("rejected"), o.getInt("deadLettered")));
        b.append(String.format(Locale.ROOT, "  effects   %,d shipping calls for %,d orders (at most %d per order)%n",
                r.getInt("shippingCalls"), r.getInt("shippedOrders"), r.getInt("maxShipmentsPerOrder")));
        return b.toString();
    }

    /** Markdown table of all runs, then guarded/unguarded throughput per round and their median. */
    static String table(List<JsonObject> runs) {
        StringBuilder b = new StringBuilder();
        b.append("| round | mode | messages | msg/s | call p50 µs | call p99 µs | guard p50 µs | guard p99 µs | machine CPU µs/msg | shipping calls / orders |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|\n");
        Map<String, Map<String, Integer>> rateByRound = new TreeMap<>();
        Map<String, Map<String, Integer>> cpuByRound = new TreeMap<>();
        for (JsonObject r : runs) {
            JsonObject t = r.getJsonObject("timing");
            JsonObject call = t.getJsonObject("callMicros");
            JsonObject guard = t.getJsonObject("guardMicros");
            boolean guarded = guard.getInt("count") > 0;
            b.append(String.format(Locale.ROOT, "| %s | %s | %,d | %,d | %.1f | %.1f | %s | %s | %,d | %,d / %,d |%n",
                    r.getString("round"), r.getString("label"), r.getInt("messages"), t.getInt("perSecond"),
                    num(call, "p50"), num(call, "p99"),
                    guarded ? String.format(Locale.ROOT, "%.1f", num(guard, "p50")) : "–",
                    guarded ? String.format(Locale.ROOT, "%.1f", num(guard, "p99")) : "–",
                    r.getInt("machineCpuMicrosPerMessage"), r.getInt("shippingCalls"), r.getInt("shippedOrders")));
            rateByRound.computeIfAbsent(r.getString("round"), k -> new TreeMap<>()).put(r.getString("label"), t.getInt("perSecond"));
            cpuByRound.computeIfAbsent(r.getString("round"), k -> new TreeMap<>()).put(r.getString("label"),
                    r.getInt("machineCpuMicrosPerMessage"));
        }
        List<Double> ratios = new ArrayList<>();
        b.append('\n');
        rateByRound.forEach((round, rates) -> {
            Integer g = rates.get("guarded");
            Integer u = rates.get("unguarded");
            if (g != null && u != null && u > 0) {
                double ratio = (double) g / u;
                ratios.add(ratio);
                b.append(String.format(Locale.ROOT, "round %s: guarded/unguarded msg/s = %,d / %,d = %.3f%n", round, g, u, ratio));
            }
        });
        // With BENCH_MODES="guarded outbox database": what each variant costs per message beside the guarded run.
        Map<String, List<Double>> rateRatios = new TreeMap<>();
        Map<String, List<Double>> cpuRatios = new TreeMap<>();
        rateByRound.forEach((round, rates) -> {
            Integer g = rates.get("guarded");
            Integer gc = cpuByRound.get(round).get("guarded");
            rates.forEach((label, rate) -> {
                if (g == null || g == 0 || gc == null || gc == 0 || label.equals("guarded") || label.equals("unguarded")) {
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
            ratios.sort(null);
            int n = ratios.size();
            double median = n % 2 == 1 ? ratios.get(n / 2) : (ratios.get(n / 2 - 1) + ratios.get(n / 2)) / 2;
            b.append(String.format(Locale.ROOT, "median ratio %.3f over %d round(s) (target >= %.2f): %s%n",
                    median, n, TARGET_RATIO, median >= TARGET_RATIO ? "met" : "MISSED"));
        }
        return b.toString();
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
