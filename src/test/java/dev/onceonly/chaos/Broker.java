package dev.onceonly.chaos;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Faults on the broker's side, through {@code rabbitmqctl}, aimed only at the consumers of one
 * queue (other users of the machine's RabbitMQ are left alone).
 */
public final class Broker {

    /** Larger than any delivery tag a channel of the run reaches. */
    private static final long UNKNOWN_DELIVERY_TAG = 999_999_999_999L;

    private Broker() {
    }

    /** Broker pids of the AMQP channels consuming {@code queue}. */
    public static List<String> consumerChannels(String queue) throws Exception {
        List<String> pids = new ArrayList<>();
        for (String line : rabbitmqctl("-q", "list_consumers", "queue_name", "channel_pid").split("\n")) {
            String[] cols = line.trim().split("\t");
            if (cols.length == 2 && cols[0].equals(queue)) {
                pids.add(cols[1].trim());
            }
        }
        return pids;
    }

    /** {@code rabbitmqctl close_connection} for every connection that has a channel consuming {@code queue}. */
    public static int closeConsumerConnections(String queue) throws Exception {
        List<String> channels = consumerChannels(queue);
        Set<String> connections = new LinkedHashSet<>();
        for (String line : rabbitmqctl("-q", "list_channels", "pid", "connection").split("\n")) {
            String[] cols = line.trim().split("\t");
            if (cols.length == 2 && channels.contains(cols[0].trim())) {
                connections.add(cols[1].trim());
            }
        }
        for (String c : connections) {
            rabbitmqctl("close_connection", c, "chaos: connection closed by the broker");
        }
        return connections.size();
    }

    /**
     * Makes the broker close each channel consuming {@code queue}, and only the channel (the
     * connection stays): {@code rabbitmqctl eval} hands the channel process a {@code basic.ack} of a
     * delivery tag it never issued, exactly what a client acking twice sends, and the broker answers
     * with {@code channel.close} 406 PRECONDITION_FAILED "unknown delivery tag". {@code rabbitmqctl}
     * has no command that closes a single channel.
     */
    public static int closeConsumerChannels(String queue) throws Exception {
        List<String> channels = consumerChannels(queue);
        for (String pid : channels) {
            rabbitmqctl("eval", "rabbit_channel:do(rabbit_misc:string_to_pid(\"" + pid + "\"), {'basic.ack', "
                    + UNKNOWN_DELIVERY_TAG + ", false}).");
        }
        return channels.size();
    }

    static String rabbitmqctl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("rabbitmqctl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("rabbitmqctl " + String.join(" ", args) + " failed: " + out);
        }
        return out;
    }
}
