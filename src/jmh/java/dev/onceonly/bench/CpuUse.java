package dev.onceonly.bench;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time from Linux's {@code /proc}, in the kernel's ticks of 10 ms: the whole machine's busy and
 * total time ({@code /proc/stat}) and each process's user + system time ({@code /proc/<pid>/stat}),
 * this JVM named {@code load-tool}. A process that exits between two readings drops out of the
 * per-process figures. Zeros where there is no {@code /proc}.
 */
record CpuUse(long busy, long total, Map<Long, Process> byPid) {

    private static final double MICROS_PER_TICK = 10_000; // USER_HZ is 100 on Linux

    /** One process's command name and CPU ticks. */
    record Process(String name, long ticks) {
    }

    static CpuUse read() throws IOException {
        Path stat = Path.of("/proc/stat");
        if (!Files.isReadable(stat)) {
            return new CpuUse(0, 0, Map.of());
        }
        // "cpu  user nice system idle iowait irq softirq steal ...": idle and iowait are not busy.
        String[] f = Files.readAllLines(stat).get(0).trim().split("\\s+");
        long total = 0;
        long idle = 0;
        for (int i = 1; i < Math.min(f.length, 9); i++) {
            long v = Long.parseLong(f[i]);
            total += v;
            if (i == 4 || i == 5) {
                idle += v;
            }
        }
        return new CpuUse(total - idle, total, processes());
    }

    private static Map<Long, Process> processes() throws IOException {
        long self = ProcessHandle.current().pid();
        Map<Long, Process> byPid = new HashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path dir : dirs) {
                String line;
                try {
                    line = Files.readString(dir.resolve("stat"));
                } catch (IOException gone) {
                    continue; // exited meanwhile
                }
                // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so cut at the last ')'.
                int open = line.indexOf('(');
                int close = line.lastIndexOf(')');
                String[] rest = line.substring(close + 2).split(" ");
                long used = Long.parseLong(rest[11]) + Long.parseLong(rest[12]); // utime, stime (fields 14, 15)
                long pid = Long.parseLong(dir.getFileName().toString());
                byPid.put(pid, new Process(pid == self ? "load-tool" : line.substring(open + 1, close), used));
            }
        }
        return byPid;
    }

    /**
     * The use between {@code before} and this reading. Per process by pid, not by name: a kernel
     * worker's name carries the work queue it serves at the moment ({@code kworker/1:6-events}), so
     * a name may be new at the second reading although its process is not. A pid absent before is a
     * process started in between, all of whose time is in the span.
     */
    CpuUse minus(CpuUse before) {
        Map<Long, Process> diff = new HashMap<>();
        byPid.forEach((pid, p) -> {
            Process earlier = before.byPid.get(pid);
            long d = p.ticks - (earlier == null ? 0 : earlier.ticks);
            if (d > 0) {
                diff.put(pid, new Process(p.name, d));
            }
        });
        return new CpuUse(busy - before.busy, total - before.total, diff);
    }

    double busyShare() {
        return total == 0 ? 0 : (double) busy / total;
    }

    double busyMicros() {
        return busy * MICROS_PER_TICK;
    }

    /**
     * Microseconds of CPU per unit (a message, a second) for each command name that used at least
     * 1 µs per unit, largest first.
     */
    JsonObject microsByProcessPer(double units) {
        // Kernel workers by their base name ("kworker/1:6-events" -> "kworker"): there are dozens, renamed as they work.
        Map<String, Long> byName = new HashMap<>();
        byPid.values().forEach(p -> byName.merge(p.name.startsWith("kworker/") ? "kworker" : p.name, p.ticks, Long::sum));
        JsonObjectBuilder b = Json.createObjectBuilder();
        byName.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                .filter(e -> e.getValue() * MICROS_PER_TICK / units >= 1)
                .forEach(e -> b.add(e.getKey(), Math.round(e.getValue() * MICROS_PER_TICK / units)));
        return b.build();
    }
}
