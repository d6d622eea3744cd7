package dev.onceonly.testing;

import java.util.List;

/**
 * Deletes one build's queues and exchanges from the shared broker: every name that starts with the
 * prefix given as the only argument ({@code onceonly.it.<http.port>.}, see
 * {@link TestRabbit#names}). The pom runs it before the test servers start (what an interrupted run
 * left) and after the build, so a build leaves nothing behind on a broker others use.
 */
public final class BrokerCleanup {

    private BrokerCleanup() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].startsWith("onceonly.it.")) {
            throw new IllegalArgumentException("one argument, the build's name prefix onceonly.it.<port>.; got " + List.of(args));
        }
        String prefix = args[0];
        List<String> queues = names("list_queues", prefix);
        List<String> exchanges = names("list_exchanges", prefix);
        try (TestRabbit rabbit = new TestRabbit()) {
            for (String q : queues) {
                rabbit.deleteQueue(q);
            }
            for (String e : exchanges) {
                rabbit.deleteExchange(e);
            }
        }
        System.out.printf("broker cleanup: deleted %d queue(s) and %d exchange(s) named %s*%n", queues.size(), exchanges.size(), prefix);
    }

    private static List<String> names(String listCommand, String prefix) throws Exception {
        return TestRabbit.rabbitmqctl("-q", listCommand, "name").lines().map(String::trim)
                .filter(n -> n.startsWith(prefix)).toList();
    }
}
