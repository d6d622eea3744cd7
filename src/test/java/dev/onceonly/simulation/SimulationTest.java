package dev.onceonly.simulation;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.LongSummaryStatistics;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.function.Predicate;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The deterministic simulation in the build: {@code sim.seeds} seeds (3,000 by default) from
 * {@code sim.first}, every mode in turn, the rarely failing ones more often ({@link Mode#weight()}). A failure prints the shrunk trace and the command that
 * replays it ({@code -Dtest=SimulationTest#replay -Dsim.seed=N}).
 */
class SimulationTest {

    private static final long FIRST = Long.getLong("sim.first", 1);
    private static final long SEEDS = Long.getLong("sim.seeds", 3_000);

    @Test
    void everyInvariantHoldsForEverySeed() {
        SimOperators.RUNS.clear();
        long t0 = System.nanoTime();
        List<Simulation.Result> failed = Simulation.runSeeds(FIRST, SEEDS);
        System.out.println("simulation: runs of each new action: " + SimOperators.RUNS);
        long millis = (System.nanoTime() - t0) / 1_000_000;
        Map<Mode, Long> runs = LongStream.range(FIRST, FIRST + SEEDS).mapToObj(Simulation::modeOf)
                .collect(Collectors.groupingBy(m -> m, Collectors.counting()));
        LongSummaryStatistics perMode = runs.values().stream().mapToLong(Long::longValue).summaryStatistics();
        System.out.printf("simulation: %d seeds from %d, %d modes (%d to %d runs each), %d failed, %d ms (%.0f seeds/s)%n", SEEDS, FIRST,
                Mode.all().size(), perMode.getMin(), perMode.getMax(), failed.size(), millis, SEEDS * 1000.0 / Math.max(1, millis));
        if (!failed.isEmpty()) {
            Simulation.Result shrunk = Simulation.shrink(failed.get(0));
            String seeds = String.join("\n  ", failed.stream().limit(40)
                    .map(r -> r.seed() + " (" + r.mode() + "): " + r.trace().violations().get(0)).toList());
            throw new AssertionError(failed.size() + " of " + SEEDS + " seeds failed:\n  " + seeds + "\n\n" + Simulation.report(shrunk));
        }
    }

    /** One seed replays one run exactly: the same faults, the same events. */
    @Test
    void aSeedReplaysItsRunExactly() {
        // The first seed of each store, of the outbox and of JMS besides (Mode.all's order changes as modes are added).
        long database = firstSeed(m -> m.store() == Mode.Store.DATABASE);
        long redisLike = firstSeed(m -> m.store() == Mode.Store.REDIS_LIKE);
        long outbox = firstSeed(Mode::outbox);
        long jms = firstSeed(m -> m.jmsDeliveries() > 0);
        for (long seed : new long[] {7, 8, 41, database, redisLike, outbox, jms}) {
            Simulation.Result a = Simulation.run(seed);
            Simulation.Result b = Simulation.run(seed);
            assertEquals(a.trace().faults(), b.trace().faults(), "faults of seed " + seed);
            assertEquals(a.trace().eventsBeforeViolation(), b.trace().eventsBeforeViolation(), "events of seed " + seed);
            assertEquals(a.steps(), b.steps());
            assertFalse(a.trace().faults().isEmpty(), "seed " + seed + " injected no fault: the schedule is not exercised");
        }
    }

    private static long firstSeed(Predicate<Mode> mode) {
        return LongStream.rangeClosed(1, Mode.all().size()).filter(s -> mode.test(Simulation.modeOf(s))).findFirst().orElseThrow();
    }

    /**
     * {@code -Dsim.seed=N [-Dsim.withhold=i,j]}: runs one seed and prints its trace; {@code
     * -Dsim.events=N -Dsim.print=N} keep and print more of it, {@code -Dsim.storeCalls=true} adds
     * every claim-store call. Without {@code sim.seed} (every build) it checks what a failure's
     * report relies on: the command printed for a run with faults withheld, read back as this
     * method reads it, replays that run exactly.
     */
    @Test
    void replay() {
        String seed = System.getProperty("sim.seed");
        if (seed != null) {
            long s = Long.parseLong(seed);
            Simulation.Result r = Simulation.run(s, Simulation.modeOf(s), Simulation.parseWithheld(System.getProperty("sim.withhold")));
            System.out.println(Simulation.report(r));
            assertTrue(!r.failed(), "seed " + s + " fails");
            return;
        }
        Simulation.Result shrunkLike = Simulation.run(8, Simulation.modeOf(8), Set.of(0, 2));
        String command = Simulation.replayCommand(shrunkLike);
        long s = Long.parseLong(command.replaceAll(".*-Dsim\\.seed=(\\d+).*", "$1"));
        Set<Integer> withheld = Simulation.parseWithheld(command.replaceAll(".*-Dsim\\.withhold=([0-9,]+).*", "$1"));
        Simulation.Result again = Simulation.run(s, Simulation.modeOf(s), withheld);
        assertEquals(Set.of(0, 2), withheld, command);
        assertEquals(shrunkLike.trace().faults(), again.trace().faults(), command);
        assertEquals(shrunkLike.trace().eventsBeforeViolation(), again.trace().eventsBeforeViolation(), command);
        assertFalse(Simulation.run(8).trace().faults().equals(again.trace().faults()), "withholding faults changed nothing");
    }
}
