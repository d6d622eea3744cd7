package dev.onceonly.testing;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs one of the tools in {@code bin/} on the test's own classpath, as a user would from a checkout. */
public final class Script {

    private Script() {
    }

    /**
     * @param script the tool, such as {@code bin/onceonly-dlq}
     * @param exit   the exit status it must end with
     * @param args   its arguments
     * @return what it printed, standard error included, line by line
     */
    public static List<String> run(Path script, int exit, List<String> args) throws Exception {
        return run(script, exit, Map.of(), args);
    }

    /**
     * @param script the tool, such as {@code bin/onceonly-topology}
     * @param exit   the exit status it must end with
     * @param env    environment variables it runs with, besides the test's own
     * @param args   its arguments
     * @return what it printed, standard error included, line by line
     */
    public static List<String> run(Path script, int exit, Map<String, String> env, List<String> args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(script.toString()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        pb.environment().put("ONCEONLY_CLASSPATH", System.getProperty("java.class.path"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(exit, p.exitValue(), out);
        return out.lines().toList();
    }
}
