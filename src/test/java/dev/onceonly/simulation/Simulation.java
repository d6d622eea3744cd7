package dev.onceonly.simulation;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs seeds: each seed picks its mode (some modes more often than others, {@link Mode#weight()}) and makes one run of {@link World} exactly repeatable. A
 * failing run is shrunk to the fewest faults that still make it fail, and reported with the command
 * that replays it.
 */
final class Simulation {

    private Simulation() {
    }

    /** One run's result. */
    record Result(long seed, Mode mode, Trace trace, Set<Integer> withheld, long steps, long virtualMillis) {
        boolean failed() {
            return trace.failed();
        }
    }

    /** Which mode each seed runs, by {@code seed mod size}: the modes weighted ({@link Mode#schedule()}). */
    private static final List<Mode> SCHEDULE = Mode.schedule();

    /** {@return the mode seed {@code seed} runs} */
    static Mode modeOf(long seed) {
        return SCHEDULE.get((int) Math.floorMod(seed, (long) SCHEDULE.size()));
    }

    static Result run(long seed) {
        return run(seed, modeOf(seed), Set.of());
    }

    static Result run(long seed, Mode mode, Set<Integer> withheld) {
        Trace trace = new Trace(withheld);
        World world = new World(seed, mode, trace);
        // The library's log lines (one per fault, by design) would be thousands per second here;
        // the trace says what happened.
        Logger log = Logger.getLogger("dev.onceonly");
        Level level = log.getLevel();
        log.setLevel(Level.OFF);
        try {
            world.run();
        } catch (RuntimeException | StackOverflowError e) {
            trace.violation("the run itself failed: " + e);
            trace.failure(e);
        } finally {
            log.setLevel(level);
            world.close();
        }
        return new Result(seed, mode, trace, withheld, world.loop.steps(), world.loop.now() / 1_000_000);
    }

    /**
     * Leaves out the run's faults one at a time, keeping each omission after which the run still
     * fails: what is left is a set of faults each of which the failure needs (one pass; a fault's
     * number is the order in which fault points fired, so after a change the later numbers may
     * name other points — the result is replayable all the same, by seed and withheld numbers).
     */
    static Result shrink(Result failed) {
        Result best = failed;
        Set<Integer> withheld = new TreeSet<>(failed.withheld());
        int points = failed.trace().faultPoints();
        for (int i = 0; i < points; i++) {
            if (withheld.contains(i)) {
                continue;
            }
            Set<Integer> trial = new TreeSet<>(withheld);
            trial.add(i);
            Result r = run(failed.seed(), failed.mode(), trial);
            if (r.failed()) {
                withheld = trial;
                best = r;
            }
        }
        return best;
    }

    /** What a failing seed prints: the faults that remain, the violations, the events before the first, and how to replay. */
    static String report(Result r) {
        StringBuilder b = new StringBuilder();
        b.append("seed ").append(r.seed()).append(" (").append(r.mode()).append(") failed after ")
                .append(r.virtualMillis()).append(" ms of virtual time, ").append(r.steps()).append(" steps\n");
        b.append("faults injected (").append(r.trace().faults().size()).append("):\n");
        r.trace().faults().forEach(f -> b.append("  ").append(f).append('\n'));
        b.append("violations:\n");
        r.trace().violations().stream().limit(20).forEach(v -> b.append("  ").append(v).append('\n'));
        b.append("events before the first violation:\n");
        List<String> events = r.trace().eventsBeforeViolation();
        events.subList(Math.max(0, events.size() - Integer.getInteger("sim.print", 120)), events.size()).forEach(e -> b.append("  ").append(e).append('\n'));
        b.append("replay: ").append(replayCommand(r)).append('\n');
        return b.toString();
    }

    static String replayCommand(Result r) {
        String withheld = r.withheld().isEmpty() ? "" : " -Dsim.withhold=" + String.join(",",
                r.withheld().stream().map(String::valueOf).toList());
        return "mvn -q test -Dtest=SimulationTest#replay -Dsim.seed=" + r.seed() + withheld;
    }

    static Set<Integer> parseWithheld(String s) {
        Set<Integer> out = new HashSet<>();
        if (s != null && !s.isBlank()) {
            for (String part : s.split(",")) {
                out.add(Integer.parseInt(part.trim()));
            }
        }
        return out;
    }

    /** Runs {@code count} seeds from {@code first}; returns the failing ones. */
    static List<Result> runSeeds(long first, long count) {
        List<Result> failed = new ArrayList<>();
        for (long s = first; s < first + count; s++) {
            Result r = run(s);
            if (r.failed()) {
                failed.add(r);
            }
        }
        return failed;
    }
}
