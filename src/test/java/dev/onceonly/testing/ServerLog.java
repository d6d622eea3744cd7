package dev.onceonly.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The messages log of one of the build's Liberty servers, read from a mark on: what a test's
 * messages made the server log.
 */
public final class ServerLog {

    /**
     * What the container or the messaging runtime logs at ERROR for an exception a guarded method
     * let out: Reactive Messaging's (with its trace), the EJB container's.
     */
    private static final List<String> RAISED = List.of("SRMSG00200", "CNTR0020E");

    private final Path file;

    private ServerLog(Path file) {
        this.file = file;
    }

    /** The messages log of {@code server} in the build's Liberty. */
    public static ServerLog of(String server) {
        return new ServerLog(Path.of(System.getProperty("liberty.wlp.dir"), "usr/servers", server, "logs/messages.log"));
    }

    /** {@return how many lines the log holds now: what {@link #since} reads from} */
    public int mark() throws IOException {
        return lines().size();
    }

    /** {@return the lines written after {@code mark}} */
    public List<String> since(int mark) throws IOException {
        List<String> all = lines();
        return all.subList(Math.min(mark, all.size()), all.size());
    }

    /** {@return the lines after {@code mark} saying an exception reached the container or the messaging runtime} */
    public List<String> raisedSince(int mark) throws IOException {
        return since(mark).stream().filter(l -> RAISED.stream().anyMatch(l::contains)).toList();
    }

    /** {@return the diagnostic incidents (FFDC) created after {@code mark}, one line each} */
    public List<String> incidentsSince(int mark) throws IOException {
        return since(mark).stream().filter(l -> l.contains("FFDC1015I")).toList();
    }

    /** {@return the lines after {@code mark} that start with {@code logId}, after Liberty's prefix} */
    public List<String> linesSince(int mark, String logId) throws IOException {
        return since(mark).stream().filter(l -> l.contains(" " + logId + ": ")).toList();
    }

    /** {@return the lines after {@code mark} that start with {@code logId} and carry a stack trace (the next line continues it)} */
    public List<String> tracedSince(int mark, String logId) throws IOException {
        List<String> lines = since(mark);
        List<String> traced = new ArrayList<>();
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).contains(" " + logId + ": ") && !lines.get(i + 1).startsWith("[")) {
                traced.add(lines.get(i));
            }
        }
        return traced;
    }

    private List<String> lines() throws IOException {
        return Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
    }
}
