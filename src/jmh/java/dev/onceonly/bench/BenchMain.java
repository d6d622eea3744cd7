package dev.onceonly.bench;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import redis.clients.jedis.RedisClient;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * Runs every benchmark, then the Redis memory measurement, and prints one table: each figure as
 * measured, as a ratio to its floor, and against its target. Started by {@code bench/run-jmh.sh}.
 *
 * <p>The suite runs in {@code BENCH_ROUNDS} rounds (default 3), each round every benchmark once
 * (one fork), so floor and candidate are measured minutes apart at most, whatever the other
 * tenants of this machine do meanwhile. Each ratio is computed within a round; the table gives the
 * median over rounds and every round's value.
 *
 * <p>Arguments are JMH's own command-line options and override the defaults set here (for example
 * {@code -i 2} for a quick look, or {@code -prof stack} to add a profiler; {@code -prof gc} and
 * {@link CpuTimeProfiler} are always on because the table needs them). Raw results go to
 * {@code target/bench/round-N.json}, the table to {@code target/bench/report.md}.
 */
public final class BenchMain {

    private static final Path OUT = Path.of("target", "bench");
    private static final String PEERS = PeersBenchmark.class.getSimpleName() + ".";

    /** What the peers table shows beside the timings: counts, the same on every run. */
    private record PeerCounts(PeerRoundTrips.Count roundTrips, double bytesPerMessage) {
    }

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        Files.createDirectories(OUT);
        CommandLineOptions cli = new CommandLineOptions(args);
        int rounds = Integer.parseInt(System.getenv().getOrDefault("BENCH_ROUNDS", "3"));
        String loadBefore = loadAverage();
        List<Map<String, RunResult>> results = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            System.out.printf(Locale.ROOT, "%n# OnceOnly benchmarks, round %d of %d (load %s)%n", round, rounds, loadAverage());
            Map<String, RunResult> byLabel = new HashMap<>();
            for (RunResult r : new Runner(options(cli, round)).run()) {
                byLabel.put(label(r), r);
            }
            results.add(byLabel);
        }
        RedisMemoryPerKey.Figure[] memory;
        Map<Peer, PeerCounts> peers = new java.util.EnumMap<>(Peer.class);
        try (RedisClient client = BenchRedis.client()) {
            RedisMemoryPerKey measure = new RedisMemoryPerKey(client);
            memory = measure.measure();
            // Counts for the peers table, only when the peers were measured.
            if (results.stream().anyMatch(r -> r.keySet().stream().anyMatch(l -> l.startsWith(PEERS)))) {
                for (Peer peer : Peer.values()) {
                    peers.put(peer, new PeerCounts(PeerRoundTrips.count(peer, BenchRedis.address()), measure.bytesPerMessage(peer)));
                }
            }
        }
        String report = new Report(results, memory, peers).render(loadBefore, loadAverage());
        Files.writeString(OUT.resolve("report.md"), report);
        System.out.println();
        System.out.println(report);
    }

    private static Options options(CommandLineOptions cli, int round) {
        ChainedOptionsBuilder b = new OptionsBuilder().parent(cli)
                .addProfiler(GCProfiler.class)
                .addProfiler(CpuTimeProfiler.class)
                .resultFormat(ResultFormatType.JSON)
                .result(OUT.resolve("round-" + round + ".json").toString());
        if (cli.getIncludes().isEmpty()) {
            b.include(RedisRoundTripBenchmark.class.getSimpleName()).include(EngineBenchmark.class.getSimpleName())
                    .include(PeersBenchmark.class.getSimpleName());
        }
        if (!cli.getForkCount().hasValue()) {
            b.forks(1);
        }
        if (!cli.getWarmupIterations().hasValue()) {
            b.warmupIterations(3);
        }
        if (!cli.getWarmupTime().hasValue()) {
            b.warmupTime(TimeValue.seconds(2));
        }
        if (!cli.getMeasurementIterations().hasValue()) {
            b.measurementIterations(4);
        }
        if (!cli.getMeasurementTime().hasValue()) {
            b.measurementTime(TimeValue.seconds(3));
        }
        return b.build();
    }

    /** {@code Class.method} plus parameter values, e.g. {@code EngineBenchmark.guardFreshMessage:1024:none}. */
    private static String label(RunResult r) {
        String name = r.getParams().getBenchmark();
        String shortName = name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1);
        return shortName + r.getParams().getParamsKeys().stream()
                .map(k -> ":" + r.getParams().getParam(k)).collect(Collectors.joining());
    }

    private static String loadAverage() throws IOException {
        String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return f[0] + " " + f[1] + " " + f[2];
    }

    /** The table: every figure as measured, as a ratio to its floor, and against its target. */
    private record Report(List<Map<String, RunResult>> rounds, RedisMemoryPerKey.Figure[] memory, Map<Peer, PeerCounts> peers) {

        private static final String FLOOR = "RedisRoundTripBenchmark.floorSetNxPx";
        private static final String GUARD_REDIS = "RedisRoundTripBenchmark.guardFreshMessage";

        String render(String loadBefore, String loadAfter) {
            List<String> t = new ArrayList<>();
            t.add("load average (1/5/15 min) before: " + loadBefore + ", after: " + loadAfter + "; "
                    + rounds.size() + " rounds, medians over rounds, per-round values in brackets");
            t.add("");
            t.add("| # | benchmark | measured | ratio to floor | target | result | JVM CPU/op | alloc/op |");
            t.add("|---|---|---|---|---|---|---|---|");
            redis(t, "1", "floor: bare `SET key v NX PX 30000`, p50", FLOOR, Double.NaN);
            redis(t, "2", "claim, fresh message, p50", "RedisRoundTripBenchmark.claimFresh", 1.15);
            redis(t, "1b", "two bare SETs of one key (`NX PX`, then `PX`), p50", "RedisRoundTripBenchmark.floorTwoSets", Double.NaN);
            redis(t, "3", "claim + complete, fresh message, p50", "RedisRoundTripBenchmark.claimAndComplete", 2.2);
            redis(t, "4", "claim of a DONE message (duplicate), p50", "RedisRoundTripBenchmark.claimDuplicate", 1.1);
            redis(t, "-", "whole guarded 1 KB message on Redis, p50", GUARD_REDIS, Double.NaN);
            redis(t, "10", "whole guarded 1 KB message on Redis, ledger on (done mark carried by the next claim), p50",
                    "RedisRoundTripBenchmark.guardFreshMessageLedgerOn", 1.2);
            redis(t, "11", "guarded batch of 32 1 KB messages on Redis, per message, p50", "RedisRoundTripBenchmark.guardBatchOf32", Double.NaN);
            redis(t, "11", "the same, ledger on, per message, p50", "RedisRoundTripBenchmark.guardBatchOf32LedgerOn", Double.NaN);
            for (int size : new int[] {1, 4, 16}) {
                batch(t, "8", "claimAll of " + size + " fresh key" + (size == 1 ? "" : "s") + ", p50", "RedisRoundTripBenchmark.claimAllFresh:" + size, size,
                        size == 16 ? 0.3 : Double.NaN);
            }
            for (int size : new int[] {1, 4, 16}) {
                batch(t, "9", "completeAll of " + size + " held key" + (size == 1 ? "" : "s") + ", p50", "RedisRoundTripBenchmark.completeAllHeld:" + size, size,
                        Double.NaN);
            }
            engine(t, "5", "engine + in-memory store, 1 KB", "EngineBenchmark.guardFreshMessage:1024:memory", 5_000);
            engine(t, "5", "engine alone (store keeps nothing), 1 KB", "EngineBenchmark.guardFreshMessage:1024:none", Double.NaN);
            engine(t, "5", "engine + in-memory store, 64 KB", "EngineBenchmark.guardFreshMessage:65536:memory", Double.NaN);
            engine(t, "5", "engine alone (store keeps nothing), 64 KB", "EngineBenchmark.guardFreshMessage:65536:none", Double.NaN);
            allocation(t);
            memory(t);
            t.add("");
            t.add("Redis rows: median (p50) of per-call samples; ratio = p50 / floor p50 within a round (rows 8 and 9: "
                    + "per message, p50 / batch size / floor p50; CPU and allocation per call; rows 11: per message throughout). Engine rows: "
                    + "wall-clock average and JVM CPU time (all threads) per message; the target is judged on CPU time.");
            peers(t);
            return String.join("\n", t) + "\n";
        }

        private void redis(List<String> t, String n, String what, String label, double target) {
            List<Double> p50 = values(label, r -> r.getPrimaryResult().getStatistics().getPercentile(50));
            if (p50.isEmpty()) {
                return;
            }
            List<Double> ratio = ratios(label, FLOOR, r -> r.getPrimaryResult().getStatistics().getPercentile(50));
            double med = median(ratio);
            t.add(String.format(Locale.ROOT, "| %s | %s | %.1f us %s | %.2fx %s | %s | %s | %.1f us | %.0f B |",
                    n, what, median(p50), list(p50, "%.1f"), med, list(ratio, "%.2f"),
                    Double.isNaN(target) ? "" : "<= " + target + "x", Double.isNaN(target) ? "" : verdict(med <= target),
                    median(values(label, r -> secondary(r, "cpu.time.norm"))) / 1000,
                    median(values(label, r -> secondary(r, "gc.alloc.rate.norm")))));
        }

        /**
         * A batch call of {@code size} messages: p50 per call and per message (over {@code size}), and
         * the per-message ratio to the floor's p50 within a round. CPU and allocation are per call.
         */
        private void batch(List<String> t, String n, String what, String label, int size, double target) {
            ToDoubleFunction<RunResult> p50 = r -> r.getPrimaryResult().getStatistics().getPercentile(50);
            List<Double> perCall = values(label, p50);
            if (perCall.isEmpty()) {
                return;
            }
            List<Double> ratio = ratios(label, FLOOR, p50).stream().map(x -> x / size).toList();
            double med = median(ratio);
            t.add(String.format(Locale.ROOT, "| %s | %s | %.1f us per call %s = %.2f us per message | %.2fx %s per message | %s | %s | %.1f us | %.0f B |",
                    n, what, median(perCall), list(perCall, "%.1f"), median(perCall) / size, med, list(ratio, "%.2f"),
                    Double.isNaN(target) ? "" : "<= " + target + "x", Double.isNaN(target) ? "" : verdict(med <= target),
                    median(values(label, r -> secondary(r, "cpu.time.norm"))) / 1000,
                    median(values(label, r -> secondary(r, "gc.alloc.rate.norm")))));
        }

        private void engine(List<String> t, String n, String what, String label, double targetNanos) {
            List<Double> wall = values(label, r -> r.getPrimaryResult().getScore());
            if (wall.isEmpty()) {
                return;
            }
            List<Double> cpu = values(label, r -> secondary(r, "cpu.time.norm"));
            t.add(String.format(Locale.ROOT, "| %s | %s | %.2f us wall %s | | %s | %s | %.2f us %s | %.0f B |",
                    n, what, median(wall) / 1000, list(scaled(wall), "%.2f"),
                    Double.isNaN(targetNanos) ? "" : "<= " + (targetNanos / 1000) + " us CPU",
                    Double.isNaN(targetNanos) ? "" : verdict(median(cpu) <= targetNanos),
                    median(cpu) / 1000, list(scaled(cpu), "%.2f"),
                    median(values(label, r -> secondary(r, "gc.alloc.rate.norm")))));
        }

        /** OnceOnly's claim and its peers, fresh and duplicate key, against the floor measured among them. */
        private void peers(List<String> t) {
            if (peers.isEmpty()) {
                return;
            }
            t.add("");
            t.add("| peer | fresh key p50 | ratio to floor | duplicate key p50 | ratio to floor | round trips fresh / duplicate "
                    + "| alloc/op fresh / duplicate | Redis memory per message |");
            t.add("|---|---|---|---|---|---|---|---|");
            ToDoubleFunction<RunResult> p50 = r -> r.getPrimaryResult().getStatistics().getPercentile(50);
            ToDoubleFunction<RunResult> alloc = r -> secondary(r, "gc.alloc.rate.norm");
            // The floor measured in the same sweep as the peers, a fresh key: both columns divide by it.
            String floor = PEERS + "freshKey:" + Peer.FLOOR;
            for (Map.Entry<Peer, PeerCounts> e : peers.entrySet()) {
                String fresh = PEERS + "freshKey:" + e.getKey();
                String duplicate = PEERS + "duplicateKey:" + e.getKey();
                t.add(String.format(Locale.ROOT, "| %s | %.1f us %s | %.2fx %s | %.1f us %s | %.2fx %s | %d / %d | %.0f B / %.0f B | %.1f B |",
                        e.getKey(), median(values(fresh, p50)), list(values(fresh, p50), "%.1f"),
                        median(ratios(fresh, floor, p50)), list(ratios(fresh, floor, p50), "%.2f"),
                        median(values(duplicate, p50)), list(values(duplicate, p50), "%.1f"),
                        median(ratios(duplicate, floor, p50)), list(ratios(duplicate, floor, p50), "%.2f"),
                        e.getValue().roundTrips().fresh(), e.getValue().roundTrips().duplicate(),
                        median(values(fresh, alloc)), median(values(duplicate, alloc)), e.getValue().bytesPerMessage()));
            }
            t.add("");
            t.add("Peers: p50 per call, ratio to FLOOR's fresh key (a bare SET NX PX, measured in the same sweep) within a round; "
                    + "round trips counted on the wire; memory = "
                    + "used_memory growth per processed message over " + RedisMemoryPerKey.KEYS + " messages.");
        }

        private void allocation(List<String> t) {
            ToDoubleFunction<RunResult> alloc = r -> secondary(r, "gc.alloc.rate.norm");
            List<Double> memory = values("EngineBenchmark.guardFreshMessage:1024:memory", alloc);
            if (!memory.isEmpty()) {
                double a = median(memory);
                t.add(String.format(Locale.ROOT, "| 6 | allocation per guarded 1 KB message, in-memory store | %.0f B %s | | <= 1536 B | %s | | |",
                        a, list(memory, "%.0f"), verdict(a <= 1536)));
            }
            List<Double> redis = values(GUARD_REDIS, alloc);
            List<Double> twoSets = values("RedisRoundTripBenchmark.floorTwoSets", alloc);
            if (!redis.isEmpty() && !twoSets.isEmpty()) {
                t.add(String.format(Locale.ROOT, "| 6 | allocation per guarded 1 KB message, Redis store: all / over two bare SETs (row 1b) "
                        + "| %.0f B / %.0f B | | | | | |", median(redis), median(redis) - median(twoSets)));
            }
        }

        private void memory(List<String> t) {
            double floor = memory[0].bytesPerKey();
            double intFloor = memory[1].bytesPerKey();
            for (RedisMemoryPerKey.Figure m : memory) {
                double ratio = m.bytesPerKey() / floor;
                boolean targeted = m.what().contains("default key");
                t.add(String.format(Locale.ROOT, "| 7 | %s: key %d chars, value `%s` (MEMORY USAGE %d B) | %.1f B/key | %.2fx (%.2fx of the `1` floor) | %s | %s | | |",
                        m.what(), m.keyLength(), m.sampleValue(), m.memoryUsage(), m.bytesPerKey(), ratio,
                        m.bytesPerKey() / intFloor, targeted ? "<= 1.2x" : "", targeted ? verdict(ratio <= 1.2) : ""));
            }
        }

        private List<Double> values(String label, ToDoubleFunction<RunResult> f) {
            List<Double> v = new ArrayList<>();
            for (Map<String, RunResult> round : rounds) {
                RunResult r = round.get(label);
                if (r != null) {
                    v.add(f.applyAsDouble(r));
                }
            }
            return v;
        }

        private List<Double> ratios(String label, String floorLabel, ToDoubleFunction<RunResult> f) {
            List<Double> v = new ArrayList<>();
            for (Map<String, RunResult> round : rounds) {
                RunResult r = round.get(label);
                RunResult floor = round.get(floorLabel);
                if (r != null && floor != null) {
                    v.add(f.applyAsDouble(r) / f.applyAsDouble(floor));
                }
            }
            return v;
        }

        private static double secondary(RunResult r, String name) {
            Result<?> s = r.getSecondaryResults().get(name);
            return s == null ? Double.NaN : s.getScore();
        }

        private static List<Double> scaled(List<Double> nanos) {
            return nanos.stream().map(v -> v / 1000).toList();
        }

        private static double median(List<Double> v) {
            if (v.isEmpty()) {
                return Double.NaN;
            }
            List<Double> s = v.stream().sorted().toList();
            int n = s.size();
            return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
        }

        private static String list(List<Double> v, String format) {
            return v.stream().map(x -> String.format(Locale.ROOT, format, x)).collect(Collectors.joining(", ", "(", ")"));
        }

        private static String verdict(boolean met) {
            return met ? "met" : "MISSED";
        }
    }
}
