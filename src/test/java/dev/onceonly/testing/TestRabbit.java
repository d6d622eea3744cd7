package dev.onceonly.testing;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The machine's RabbitMQ as the tests see it (127.0.0.1:5672, guest/guest): publishing with
 * confirms, queue depths, dead-letter reads, and closing a server's connection from the broker side.
 */
public final class TestRabbit implements AutoCloseable {

    private final Connection connection;
    private final Channel channel;

    public TestRabbit() throws IOException, TimeoutException {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        f.setPort(5672);
        connection = f.newConnection("onceonly-tests");
        channel = connection.createChannel();
        channel.confirmSelect();
    }

    /** The prefix of every exchange and queue of the test server listening on this HTTP port. */
    public static String names(String httpPort) {
        return "onceonly.it." + httpPort;
    }

    public void publish(String exchange, String routingKey, AMQP.BasicProperties props, String body) throws Exception {
        channel.basicPublish(exchange, routingKey, true, props, body.getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(10_000);
    }

    public void publish(String exchange, String routingKey, String body) throws Exception {
        publish(exchange, routingKey, new AMQP.BasicProperties.Builder().contentType("text/plain").build(), body);
    }

    /** Ready messages (not counting deliveries a consumer holds unacked). */
    public int ready(String queue) throws Exception {
        return passive(queue).getMessageCount();
    }

    /** Asks on a channel of its own: a passive declare of a missing queue closes the channel it ran on. */
    private AMQP.Queue.DeclareOk passive(String queue) throws Exception {
        try (Channel ch = connection.createChannel()) {
            return ch.queueDeclarePassive(queue);
        }
    }

    /** A durable classic queue, declared as an administrator would, outside the connector. */
    public void declareQueue(String queue) throws IOException {
        channel.queueDeclare(queue, true, false, false, null);
    }

    /** A durable quorum queue, declared as an administrator would, outside the connector. */
    public void declareQuorumQueue(String queue) throws IOException {
        channel.queueDeclare(queue, true, false, false, java.util.Map.of("x-queue-type", "quorum"));
    }

    public void bind(String queue, String exchange, String key) throws IOException {
        channel.queueBind(queue, exchange, key);
    }

    public void unbind(String queue, String exchange, String key) throws IOException {
        channel.queueUnbind(queue, exchange, key);
    }

    public void deleteQueue(String queue) throws IOException {
        channel.queueDelete(queue);
    }

    public void deleteExchange(String exchange) throws IOException {
        channel.exchangeDelete(exchange);
    }

    /** Deletes what an incoming channel declares for {@code queue} by default: it, its dead-letter queue (and the queue its reads register on) and exchange. */
    public void deleteChannelTopology(String queue) throws IOException {
        deleteQueue(queue);
        deleteQueue(queue + ".dlq");
        deleteQueue(queue + ".dlq.readers");
        deleteQueue(queue + ".dlq.readers.alone");
        deleteExchange(queue + ".dlx");
    }

    /** Messages in the queue, ready or delivered but not yet acked (from the broker's own bookkeeping). */
    public static int total(String queue) throws Exception {
        for (String line : rabbitmqctl("-q", "list_queues", "name", "messages").split("\n")) {
            String[] cols = line.trim().split("\t");
            if (cols.length == 2 && cols[0].equals(queue)) {
                return Integer.parseInt(cols[1].trim());
            }
        }
        throw new IllegalStateException("no queue " + queue);
    }

    /** Messages delivered to a consumer and not yet acked (from the broker's own bookkeeping). */
    public static int unacknowledged(String queue) throws Exception {
        for (String line : rabbitmqctl("-q", "list_queues", "name", "messages_unacknowledged").split("\n")) {
            String[] cols = line.trim().split("\t");
            if (cols.length == 2 && cols[0].equals(queue)) {
                return Integer.parseInt(cols[1].trim());
            }
        }
        throw new IllegalStateException("no queue " + queue);
    }

    /** The arguments the queue was declared with, as {@code rabbitmqctl} prints them (JSON). */
    public static String queueArguments(String queue) throws Exception {
        for (String line : rabbitmqctl("-q", "list_queues", "name", "arguments", "--formatter", "json").split("\n")) {
            if (line.contains("\"name\":\"" + queue + "\"")) {
                return line;
            }
        }
        throw new IllegalStateException("no queue " + queue);
    }

    /**
     * The broker's process id of the connection named {@code name}, or of the connector's connection
     * {@code name@<instance>} when {@code name} has no instance part ({@code onceonly:<channel>:<role>},
     * whatever instance opened it), or {@code null}.
     */
    public static String connectionPid(String name) throws Exception {
        for (String line : rabbitmqctl("-q", "list_connections", "pid", "client_properties").split("\n")) {
            if (line.contains("{\"connection_name\",\"" + name + "\"}") || line.contains("{\"connection_name\",\"" + name + "@")) {
                return line.substring(0, line.indexOf('\t')).trim();
            }
        }
        return null;
    }

    /** The {@code connection_name} of every client connection on the broker. */
    public static List<String> connectionNames() throws Exception {
        List<String> names = new ArrayList<>();
        Matcher m = Pattern.compile("\\{\"connection_name\",\"([^\"]*)\"\\}")
                .matcher(rabbitmqctl("-q", "list_connections", "client_properties"));
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    public int consumers(String queue) throws Exception {
        return passive(queue).getConsumerCount();
    }

    public void purge(String queue) throws IOException {
        channel.queuePurge(queue);
    }

    /** Takes every ready message off the queue. */
    public List<GetResponse> drain(String queue) throws IOException {
        List<GetResponse> all = new ArrayList<>();
        for (GetResponse r = channel.basicGet(queue, true); r != null; r = channel.basicGet(queue, true)) {
            all.add(r);
        }
        return all;
    }

    /** Closes, from the broker side, the connection the client named {@code name}. */
    public static void closeConnection(String name) throws Exception {
        String pid = connectionPid(name);
        if (pid == null) {
            throw new IllegalStateException("no connection named " + name);
        }
        rabbitmqctl("close_connection", pid, "closed by a test");
    }

    /** Runs {@code rabbitmqctl} with {@code args}; fails with its output when it fails. */
    public static String rabbitmqctl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("rabbitmqctl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("rabbitmqctl " + String.join(" ", args) + " failed: " + out);
        }
        return out;
    }

    @Override
    public void close() throws IOException, TimeoutException {
        connection.close();
    }
}
