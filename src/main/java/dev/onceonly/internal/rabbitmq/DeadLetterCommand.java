package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Connection;
import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterPage;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.deadletter.DeadLetterOperations;
import dev.onceonly.internal.support.Durations;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code bin/onceonly-dlq}: the dead-letter operations on a channel's dead-letter queue from the
 * command line, with the application's properties read as {@code bin/onceonly-topology} reads them
 * ({@link CommandConfig}). Its usage is in the script and in {@code docs/operations.md}. A replay
 * from here waits for the guard's decision ({@code --wait}, 30 seconds by default: the application's
 * connector makes it, logs it, {@code ONCE0803I}, and sends it back); a letter whose replay was not
 * decided by then stays in its queue. Prints no body unless {@code show --body} asks for it, no key, no password.
 */
public final class DeadLetterCommand {

    private static final String TOOL = "onceonly-dlq";

    /** Held here: the logging framework keeps only weak references to loggers, and their levels with them. */
    private static final Logger LIBRARY_LOG = Logger.getLogger("dev.onceonly");

    private final PrintStream out;
    private final CommandConfig command = new CommandConfig();
    private final List<String> words = new ArrayList<>();
    /** amqp-client's consumer work pool of each connection the operations open; the JVM exits with {@code System.exit}. */
    private final ExecutorService pool = Executors.newSingleThreadExecutor();
    /** The tool's one connection, opened by the first operation; closed when the JVM exits. */
    private Connection connection;
    private String outcome;
    private String reason;
    private String consumer;
    private Duration olderThan;
    /** How long a replay waits for the guard's decisions: a letter leaves its queue only once its replay is decided. */
    private Duration wait = Duration.ofSeconds(30);
    private int offset;
    private int limit = 50;
    private boolean all;
    private boolean dryRun;
    private boolean body;
    private boolean unverified;

    private DeadLetterCommand(PrintStream out) {
        this.out = out;
    }

    /**
     * Runs the command; exits 2 on a usage error, 1 when the broker fails it or the dead letter is not there.
     *
     * @param args {@code list | show ID [--body] | replay (ID [--unverified] | --all) | discard (ID | --all)}, with
     *             {@code --config FILE}, {@code --set NAME=VALUE}, {@code --channel NAME}, the filters
     *             {@code --outcome}, {@code --reason}, {@code --consumer}, {@code --older-than}, and
     *             {@code --offset}, {@code --limit}, {@code --wait}, {@code --dry-run}
     */
    public static void main(String[] args) {
        // What the library logs (ONCE0801I, ONCE0802W) is printed here as the command's own output.
        LIBRARY_LOG.setLevel(Level.OFF);
        DeadLetterCommand c = new DeadLetterCommand(System.out);
        DeadLetterQueue queue;
        try {
            c.parse(args);
            queue = c.queue();
        } catch (IllegalArgumentException | IOException e) {
            CommandConfig.exit(TOOL, e, 2);
            return;
        } catch (OnceOnlyException e) { // a property (InvalidConfigurationException names it)
            CommandConfig.exit(TOOL, e, 1);
            return;
        }
        try {
            System.exit(c.run(queue) ? 0 : 1);
        } catch (OnceOnlyException e) { // the broker
            CommandConfig.exit(TOOL, e, 1);
        }
    }

    private void parse(String[] args) throws IOException {
        for (int i = 0; i < args.length; i++) {
            int taken = command.take(args, i);
            if (taken >= 0) {
                i = taken;
                continue;
            }
            String a = args[i];
            switch (a) {
                case "--all" -> all = true;
                case "--dry-run" -> dryRun = true;
                case "--body" -> body = true;
                case "--unverified" -> unverified = true;
                case "--outcome", "--reason", "--consumer", "--older-than", "--wait", "--offset", "--limit" -> {
                    if (i + 1 == args.length) {
                        throw new IllegalArgumentException(a + " needs a value");
                    }
                    option(a, args[++i]);
                }
                default -> {
                    if (a.startsWith("--")) {
                        throw new IllegalArgumentException("unknown option " + a + " (--help)");
                    }
                    words.add(a);
                }
            }
        }
        String verb = words.isEmpty() ? "" : words.get(0);
        boolean oneOrAll = verb.equals("replay") || verb.equals("discard");
        boolean valid = switch (verb) {
            case "list" -> words.size() == 1 && !all && !body;
            case "show" -> words.size() == 2 && !all && !dryRun;
            case "replay", "discard" -> (words.size() == 2) != all && !body;
            default -> false;
        };
        if (!valid) {
            throw new IllegalArgumentException("give one of: list, show ID [--body], replay (ID [--unverified] | "
                    + "--all), discard (ID | --all)");
        }
        if (dryRun && !(oneOrAll && all)) {
            throw new IllegalArgumentException("--dry-run goes with replay --all or discard --all");
        }
        if (unverified && !(verb.equals("replay") && !all)) {
            throw new IllegalArgumentException("--unverified goes with replay ID: one dead letter an operator "
                    + "looked at");
        }
    }

    private void option(String name, String value) {
        switch (name) {
            case "--outcome" -> outcome = value;
            case "--reason" -> reason = value;
            case "--consumer" -> consumer = value;
            case "--older-than" -> olderThan = duration(name, value);
            case "--wait" -> wait = duration(name, value);
            default -> {
                try {
                    int n = Integer.parseInt(value);
                    if (n < 0) {
                        throw new NumberFormatException();
                    }
                    if (name.equals("--offset")) {
                        offset = n;
                    } else {
                        limit = n;
                    }
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(name + ": a number from 0, not " + value);
                }
            }
        }
    }

    private static Duration duration(String name, String value) {
        Duration d = Durations.parse(value);
        if (d == null) {
            throw new IllegalArgumentException(name + ": " + Durations.ACCEPTED);
        }
        return d;
    }

    /** The one incoming channel's queue: {@code --channel}, needed when there are several. */
    private DeadLetterQueue queue() {
        List<CommandConfig.Channel> incoming = command.channels(command.config()).stream()
                .filter(c -> c.direction() == ChannelConfig.Direction.INCOMING).toList();
        if (incoming.size() != 1) {
            throw new IllegalArgumentException(incoming.isEmpty() ? "no incoming channel of the connector (--channel)"
                    : "several incoming channels: name one with --channel, of " + incoming.stream().map(CommandConfig.Channel::name).toList());
        }
        IncomingSettings s = incoming.get(0).config().incoming();
        DeadLetterEndpoint endpoint = DeadLetterEndpoint.of(s, () -> {
            if (connection == null) {
                connection = Connections.open(s.connection(), s.channel(), "dead-letters", Executors.defaultThreadFactory(), pool, () -> { });
            }
            return connection.createChannel();
        });
        out.printf("channel %s, dead-letter queue %s on %s%n", endpoint.channel(), endpoint.queue(), s.connection().describe());
        return new DeadLetterOperations(endpoint, Clock.systemUTC());
    }

    /** @return whether everything asked for was there */
    private boolean run(DeadLetterQueue queue) {
        DeadLetterFilter filter = new DeadLetterFilter(outcome, reason, consumer, olderThan);
        String verb = words.get(0);
        String id = words.size() > 1 ? words.get(1) : null;
        switch (verb) {
            case "list" -> {
                DeadLetterPage page = queue.list(filter, offset, limit);
                out.printf("%d dead letter(s), %d matching, showing %d from %d%n", page.inQueue(), page.matching(),
                        page.letters().size(), offset);
                page.letters().forEach(l -> out.println(line(l)));
                return true;
            }
            case "show" -> {
                if (body) {
                    Optional<byte[]> b = queue.body(id);
                    b.ifPresent(bytes -> out.write(bytes, 0, bytes.length));
                    out.flush();
                    return found(b.isPresent(), id);
                }
                Optional<DeadLetter> l = queue.find(id);
                l.ifPresent(letter -> out.println(details(letter)));
                return found(l.isPresent(), id);
            }
            case "replay" -> {
                if (all && dryRun) {
                    return listDryRun(queue, filter, "replay");
                }
                List<ReplayResult> results = all ? queue.replayAll(filter, wait)
                        : List.of(unverified ? queue.replayUnverified(id, wait) : queue.replay(id, wait));
                results.forEach(r -> out.printf("%s %s: %s%n", r.id(), r.status(), r.detail()));
                return results.stream().noneMatch(r -> r.status() == ReplayResult.Status.NOT_FOUND);
            }
            default -> {
                if (all && dryRun) {
                    return listDryRun(queue, filter, "discard");
                }
                List<DeadLetter> gone = all ? queue.discardAll(filter) : queue.discard(id).map(List::of).orElse(List.of());
                gone.forEach(l -> out.println("discarded " + line(l)));
                return all || found(!gone.isEmpty(), id);
            }
        }
    }

    private boolean listDryRun(DeadLetterQueue queue, DeadLetterFilter filter, String verb) {
        // replay --all leaves unverified dead letters where they are.
        List<DeadLetter> letters = queue.list(filter, 0, Integer.MAX_VALUE).letters().stream()
                .filter(l -> verb.equals("discard") || l.verified()).toList();
        out.printf("dry run: %s would %s %d dead letter(s)%n", verb, verb, letters.size());
        letters.forEach(l -> out.println(line(l)));
        return true;
    }

    private boolean found(boolean found, String id) {
        if (!found) {
            System.err.println(TOOL + ": no dead letter " + id + " in the queue");
        }
        return found;
    }

    private static String line(DeadLetter l) {
        return String.format("%s%s  %s  attempts %d  consumer %s  at %s  key %s  body sha256 %s (%d bytes)  replays "
                + "%d  %s",
                l.id(), l.verified() ? "" : " "
                        + "(unverified)", dash(l.outcome()), l.attempts(), dash(l.consumer()),
                                l.deadLetteredAt() == null ? "-" : l.deadLetteredAt(),
                dash(l.keyDigest()), l.bodySha256().substring(0, 16), l.bodyBytes(), l.replays(), l.reason());
    }

    private static String details(DeadLetter l) {
        return String.join(System.lineSeparator(), "id: " + l.id(), "outcome: " + dash(l.outcome()), "reason: " + dash(l.reason()),
                "attempts: " + l.attempts(), "consumer: " + dash(l.consumer()),
                "dead-lettered at: " + (l.deadLetteredAt() == null ? "-" : l.deadLetteredAt()), "key digest: " + dash(l.keyDigest()),
                "body sha256: " + l.bodySha256(), "body bytes: " + l.bodyBytes(), "replays: " + l.replays(),
                "verified: " + (l.verified() ? "yes" : "no"),
                "replay: " + (l.verified() ? "to the channel's queue, as published to exchange "
                        + "'" + l.exchange() + "', routing key '"
                        + l.routingKey() + "'" : "only with replay --unverified, as a new message to the channel's "
                        + "queue"));
    }

    private static String dash(String s) {
        return s == null || s.isEmpty() ? "-" : s;
    }
}
