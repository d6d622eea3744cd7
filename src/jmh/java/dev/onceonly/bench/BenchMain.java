package dev.onceonly.bench;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import redis.clients.jedis.RedisClient;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Runs every benchmark in one go (so all ratios come from the same run on the same machine state),
 * then the Redis memory measurement, and prints one table: each figure as measured, as a ratio to
 * its floor, and against its target. Started by {@code bench/run-jmh.sh}.
 *
 * <p>Arguments are JMH's own command-line options and override the defaults set here (for example
 * {@code -f 1 -i 3} for a quick look, or {@code -prof stack} to add a profiler; {@code -prof gc} is
 * always on because the table needs it). The raw JMH results go to {@code target/bench/jmh.json},
 * the table to {@code target/bench/report.md}.
 */
public final class BenchMain {

    private static final Path OUT = Path.of("target", "bench");

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        Files.createDirectories(OUT);
        String loadBefore = loadAverage();
        Collection<RunResult> results = new Runner(options(new CommandLineOptions(args))).run();
        RedisMemoryPerKey.Figure[] memory;
        try (RedisClient client = BenchRedis.client()) {
            memory = new RedisMemoryPerKey(client).measure();
        }
        String report = new Report(results, memory, loadBefore, loadAverage()).render();
        Files.writeString(OUT.resolve("report.md"), report);
        System.out.println();
        System.out.println(report);
    }

    private static org.openjdk.jmh.runner.options.Options options(CommandLineOptions cli) {
        ChainedOptionsBuilder b = new OptionsBuilder().parent(cli)
                .addProfiler(GCProfiler.class)
                .resultFormat(ResultFormatType.JSON)
                .result(OUT.resolve("jmh.json").toString());
        if (cli.getIncludes().isEmpty()) {
            b.include(RedisRoundTripBenchmark.class.getSimpleName()).include(EngineBenchmark.class.getSimpleName());
        }
        if (!cli.getForkCount().hasValue()) {
            b.forks(2);
        }
        if (!cli.getWarmupIterations().hasValue()) {
            b.warmupIterations(4);
        }
        if (!cli.getWarmupTime().hasValue()) {
            b.warmupTime(TimeValue.seconds(2));
        }
        if (!cli.getMeasurementIterations().hasValue()) {
            b.measurementIterations(5);
        }
        if (!cli.getMeasurementTime().hasValue()) {
            b.measurementTime(TimeValue.seconds(3));
        }
        return b.build();
    }

    private static String loadAverage() throws IOException {
        String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
        return f[0] + " " + f[1] + " " + f[2];
    }

    /** The table: every figure as measured, as a ratio to its floor, and against its target. */
    private record Report(Collection<RunResult> results, RedisMemoryPerKey.Figure[] memory,
                          String loadBefore, String loadAfter) {

        private static final String REDIS = RedisRoundTripBenchmark.class.getName() + ".";
        private static final String ENGINE = EngineBenchmark.class.getName() + ".";

        String render() {
            List<String> rows = new ArrayList<>();
            rows.add("load average (1/5/15 min) before: " + loadBefore + ", after: " + loadAfter);
            rows.add("");
            rows.add("| # | benchmark | measured | ratio to floor | target | result | alloc B/op |");
            rows.add("|---|---|---|---|---|---|---|");
            RunResult floor = find(REDIS + "floorSetNxPx", null);
            double floorP50 = floor == null ? Double.NaN : p50(floor);
            double floorMean = floor == null ? Double.NaN : floor.getPrimaryResult().getScore();
            redisRow(rows, "1", "floor: bare `SET NX PX`", floor, floorP50, floorMean, Double.NaN);
            redisRow(rows, "2", "claim, fresh message", find(REDIS + "claimFresh", null), floorP50, floorMean, 1.15);
            redisRow(rows, "3", "claim + complete, fresh message", find(REDIS + "claimAndComplete", null), floorP50, floorMean, 2.2);
            redisRow(rows, "4", "claim of a DONE message (duplicate)", find(REDIS + "claimDuplicate", null), floorP50, floorMean, 1.1);
            redisRow(rows, "-", "whole guarded message on Redis, 1 KB", find(REDIS + "guardFreshMessage", null), floorP50, floorMean, Double.NaN);
            RunResult engine1k = find(ENGINE + "guardFreshMessage", "1024");
            RunResult engine64k = find(ENGINE + "guardFreshMessage", "65536");
            engineRow(rows, "5", "engine CPU per message, 1 KB (in-memory store)", engine1k, 5_000);
            engineRow(rows, "5", "engine CPU per message, 64 KB (in-memory store)", engine64k, Double.NaN);
            if (engine1k != null) {
                double alloc = alloc(engine1k);
                rows.add(String.format(Locale.ROOT, "| 6 | allocation per guarded message, 1 KB (in-memory store) | %.0f B | | <= 1536 B | %s | |",
                        alloc, verdict(alloc <= 1536)));
            }
            RunResult guardRedis = find(REDIS + "guardFreshMessage", null);
            if (guardRedis != null) {
                rows.add(String.format(Locale.ROOT, "| 6 | allocation per guarded message, 1 KB (Redis store, Jedis included) | %.0f B | | | | |",
                        alloc(guardRedis)));
            }
            double memoryFloor = memory[0].bytesPerKey();
            for (int i = 0; i < memory.length; i++) {
                RedisMemoryPerKey.Figure m = memory[i];
                double ratio = m.bytesPerKey() / memoryFloor;
                boolean targeted = m.what().contains("default key");
                rows.add(String.format(Locale.ROOT, "| 7 | %s: key %d chars, value `%s` (MEMORY USAGE %d B) | %.1f B/key | %.2fx | %s | %s | |",
                        m.what(), m.keyLength(), m.sampleValue(), m.memoryUsage(), m.bytesPerKey(), ratio,
                        targeted ? "<= 1.2x" : "", targeted ? verdict(ratio <= 1.2) : ""));
            }
            rows.add("");
            rows.add("Redis latencies: median (p50) of per-call samples, mean in brackets; ratios are p50/p50 (mean/mean in brackets).");
            return String.join("\n", rows) + "\n";
        }

        private RunResult find(String benchmark, String bodySize) {
            for (RunResult r : results) {
                if (r.getParams().getBenchmark().equals(benchmark)
                        && (bodySize == null || bodySize.equals(r.getParams().getParam("bodySize")))) {
                    return r;
                }
            }
            return null;
        }

        private static void redisRow(List<String> rows, String n, String what, RunResult r,
                                     double floorP50, double floorMean, double target) {
            if (r == null) {
                return;
            }
            double p50 = p50(r);
            double mean = r.getPrimaryResult().getScore();
            double ratio = p50 / floorP50;
            rows.add(String.format(Locale.ROOT, "| %s | %s | %.1f us (%.1f) | %.2fx (%.2fx) | %s | %s | %.0f |",
                    n, what, p50, mean, ratio, mean / floorMean,
                    Double.isNaN(target) ? "" : "<= " + target + "x",
                    Double.isNaN(target) ? "" : verdict(ratio <= target), alloc(r)));
        }

        private static void engineRow(List<String> rows, String n, String what, RunResult r, double targetNanos) {
            if (r == null) {
                return;
            }
            Result<?> p = r.getPrimaryResult();
            rows.add(String.format(Locale.ROOT, "| %s | %s | %.2f ± %.2f us | | %s | %s | %.0f |",
                    n, what, p.getScore() / 1000, p.getScoreError() / 1000,
                    Double.isNaN(targetNanos) ? "" : "<= " + (targetNanos / 1000) + " us",
                    Double.isNaN(targetNanos) ? "" : verdict(p.getScore() <= targetNanos), alloc(r)));
        }

        private static double p50(RunResult r) {
            return r.getPrimaryResult().getStatistics().getPercentile(50);
        }

        private static double alloc(RunResult r) {
            Result<?> a = r.getSecondaryResults().get("gc.alloc.rate.norm");
            return a == null ? Double.NaN : a.getScore();
        }

        private static String verdict(boolean met) {
            return met ? "met" : "MISSED";
        }
    }
}
