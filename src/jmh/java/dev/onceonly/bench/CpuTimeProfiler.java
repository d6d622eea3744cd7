package dev.onceonly.bench;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.List;

/**
 * CPU time of the whole benchmark JVM per operation ({@code cpu.time.norm}, ns/op): every thread,
 * the benchmark's and those it hands work to (lease watchdog, cache maintenance, GC). Unlike the
 * wall-clock score it does not grow while another process holds the CPU, so on a shared machine
 * it is the steadier figure of what the code itself costs. Enable with
 * {@code -prof dev.onceonly.bench.CpuTimeProfiler}; {@link BenchMain} always does.
 */
public final class CpuTimeProfiler implements InternalProfiler {

    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private long startNanos;

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        startNanos = os.getProcessCpuTime();
    }

    @Override
    public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
                                                       IterationResult result) {
        long cpu = os.getProcessCpuTime() - startNanos;
        long ops = result.getMetadata().getAllOps();
        return List.of(new ScalarResult("cpu.time.norm", ops == 0 ? Double.NaN : (double) cpu / ops, "ns/op",
                AggregationPolicy.AVG));
    }

    @Override
    public String getDescription() {
        return "CPU time of the benchmark JVM (all threads) per operation";
    }
}
