package dev.onceonly.bench;

import dev.onceonly.chaos.ChaosDriver;
import dev.onceonly.chaos.ChaosReport;
import dev.onceonly.testing.Args;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The full chaos run ({@code bench/run-chaos.sh}; RELIABILITY.md): {@link ChaosDriver} with the
 * options given, its table on stdout and in {@code --out}, and an exit code: 0 when every check
 * held, 1 on any violation, 2 when the run could not be carried out.
 */
public final class ChaosRun {

    private ChaosRun() {
    }

    public static void main(String[] argv) {
        Args args = Args.parse(argv, "--orders --copy-percent --invalid --publish-window --kills --lease --slow-percent --slow-delay "
                + "--concurrency --batch-size --deadline --queue --queue-type --schema --wlp --port --label --seed --out");
        ChaosDriver.Settings s = new ChaosDriver.Settings();
        s.orders = args.integer("orders", s.orders);
        s.copyPercent = args.integer("copy-percent", s.copyPercent);
        s.invalidOrders = args.integer("invalid", s.invalidOrders);
        s.publishWindow = args.duration("publish-window", s.publishWindow);
        s.kills = args.integer("kills", s.kills);
        s.lease = args.duration("lease", s.lease);
        s.slowPercent = Double.parseDouble(args.get("slow-percent", Double.toString(s.slowPercent)));
        s.slowDelay = args.duration("slow-delay", s.slowDelay);
        s.concurrency = args.integer("concurrency", s.concurrency);
        s.batchSize = args.integer("batch-size", s.batchSize);
        s.deadline = args.duration("deadline", s.publishWindow.plus(Duration.ofMinutes(10)));
        s.queue = args.get("queue", s.queue);
        s.queueType = args.get("queue-type", s.queueType);
        s.schema = args.get("schema", s.schema);
        s.wlp = Path.of(args.get("wlp", s.wlp.toString()));
        s.firstHttpPort = args.integer("port", s.firstHttpPort);
        s.label = args.get("label", s.label);
        s.seed = Long.parseLong(args.get("seed", Long.toString(s.seed)));
        s.out = Path.of(args.get("out", s.out.toString()));
        int code;
        try {
            ChaosReport report = new ChaosDriver(s).run();
            System.out.println(report.verdict());
            code = report.passed() ? 0 : 1;
        } catch (Exception e) {
            e.printStackTrace();
            System.out.println("ABORTED: " + e);
            code = 2;
        }
        System.exit(code);
    }
}
