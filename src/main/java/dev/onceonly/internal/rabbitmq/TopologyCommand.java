package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.onceonly.internal.rabbitmq.ChannelTopology.BrokerObject;
import dev.onceonly.internal.rabbitmq.ChannelTopology.Kind;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@code bin/onceonly-topology}: lists the queues and exchanges the connector declares for an
 * application's channels, read from its MicroProfile Config properties the way the connector reads
 * them ({@link ChannelConfig}), and deletes them with {@code --delete}, over AMQP (no management
 * plugin needed). Its usage is in the script and in {@code docs/topology.md}. Prints names, counts
 * and the broker's address, never a password.
 */
public final class TopologyCommand {

    private final PrintStream out;
    private final CommandConfig command = new CommandConfig();
    private boolean delete;
    private boolean force;
    private boolean exchanges;

    private TopologyCommand(PrintStream out) {
        this.out = out;
    }

    /**
     * Runs the command; exits 2 on a usage error, 1 when the configuration or the broker fails it.
     *
     * @param args the script's arguments: {@code --config FILE}, {@code --set NAME=VALUE},
     *             {@code --channel NAME}, {@code --delete}, {@code --force}, {@code --include-exchanges}
     */
    public static void main(String[] args) {
        TopologyCommand command = new TopologyCommand(System.out);
        try {
            command.parse(args);
        } catch (IllegalArgumentException | IOException e) {
            CommandConfig.exit("onceonly-topology", e, 2);
        }
        try {
            command.run();
        } catch (Exception e) {
            CommandConfig.exit("onceonly-topology", e, 1);
        }
    }

    private void parse(String[] args) throws IOException {
        for (int i = 0; i < args.length; i++) {
            int taken = command.take(args, i);
            if (taken >= 0) {
                i = taken;
                continue;
            }
            switch (args[i]) {
                case "--delete" -> delete = true;
                case "--force" -> force = true;
                case "--include-exchanges" -> exchanges = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (--help)");
            }
        }
        if ((force || exchanges) && !delete) {
            throw new IllegalArgumentException("--force and --include-exchanges go with --delete");
        }
    }

    private void run() throws Exception {
        for (CommandConfig.Channel c : command.channels(command.config())) {
            if (c.direction() == ChannelConfig.Direction.INCOMING) {
                IncomingSettings s = c.config().incomingWithoutSigning();
                show(ChannelTopology.of(s), s.connection(), "incoming");
            } else {
                OutgoingSettings s = c.config().outgoing();
                show(ChannelTopology.of(s), s.connection(), "outgoing");
            }
        }
    }

    private void show(ChannelTopology topology, ConnectionSettings broker, String direction) throws Exception {
        out.printf("channel %s (%s) on %s%s%n", topology.channel(), direction, broker.describe(),
                topology.declared() ? "" : ": declare=false, declared by an operator, never deleted here");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Connection connection = Connections.open(broker, topology.channel(), "topology", Executors.defaultThreadFactory(), pool, () -> { });
        try {
            int possibleDelays = 0;
            List<String> delays = new ArrayList<>();
            for (BrokerObject o : topology.objects()) {
                AMQP.Queue.DeclareOk queue = null;
                boolean exists = true;
                // A channel each: the broker closes the one a passive declaration of something absent ran on.
                Channel ch = connection.createChannel();
                try {
                    if (o.kind() == Kind.QUEUE) {
                        queue = ch.queueDeclarePassive(o.name());
                    } else {
                        ch.exchangeDeclarePassive(o.name());
                    }
                } catch (IOException notFound) {
                    exists = false;
                } finally {
                    Connections.closeQuietly(ch);
                }
                if (o.maybe()) {
                    possibleDelays++;
                    delays.add(o.name().substring(o.name().lastIndexOf('.') + 1));
                    if (!exists) {
                        continue;
                    }
                }
                String state = !exists ? "absent"
                        : queue == null ? "exists"
                        : "exists, " + queue.getMessageCount() + " message(s), " + queue.getConsumerCount() + " consumer(s)";
                out.printf("  %-8s %s (%s): %s%s%n", o.kind().name().toLowerCase(Locale.ROOT), o.name(), o.role(), state,
                        exists && topology.declared() ? deletion(connection, o, queue) : "");
            }
            if (possibleDelays > 0) {
                out.printf("  delay queues: %d possible, named <queue>%s<ms> for ms in %s; only those that exist are listed%n",
                        possibleDelays, DelayQueueNames.INFIX, String.join(", ", delays));
            }
        } finally {
            Connections.closeQuietly(connection);
            pool.shutdownNow();
        }
    }

    /** Deletes {@code o} with {@code --delete} (what it did), or says what {@code --delete} would do. */
    private String deletion(Connection connection, BrokerObject o, AMQP.Queue.DeclareOk queue) throws IOException {
        if (o.shared() && !exchanges) {
            return delete ? "; kept (shared: --include-exchanges deletes it)" : "; --delete keeps it (shared), --include-exchanges deletes it";
        }
        if (queue != null && (queue.getMessageCount() > 0 || queue.getConsumerCount() > 0) && !force) {
            String why = queue.getConsumerCount() > 0 ? "in use: stop the application first" : "holds messages";
            return delete ? "; kept (" + why + "; --force deletes it)" : "; --delete keeps it (" + why + "), --force deletes it";
        }
        if (!delete) {
            return "; --delete deletes it";
        }
        Channel ch = connection.createChannel();
        try {
            if (o.kind() == Kind.QUEUE) {
                ch.queueDelete(o.name());
            } else {
                ch.exchangeDelete(o.name());
            }
        } finally {
            Connections.closeQuietly(ch);
        }
        return "; deleted";
    }
}
