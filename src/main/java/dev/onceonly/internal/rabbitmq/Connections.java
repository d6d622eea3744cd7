package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Recoverable;
import com.rabbitmq.client.RecoveryListener;
import com.rabbitmq.client.impl.recovery.RecordedQueue;
import com.rabbitmq.client.impl.recovery.TopologyRecoveryFilter;
import dev.onceonly.internal.support.LogId;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeoutException;

/** Opens amqp-client connections on the server's managed threads, with automatic recovery. */
final class Connections {

    private static final int CLOSE_TIMEOUT_MS = 5_000;
    private static final int RPC_TIMEOUT_MS = 30_000;

    private Connections() {
    }

    /**
     * Opens the connection of {@code channel} for {@code role} ({@code consume}, {@code publish}),
     * named {@code onceonly:<channel>:<role>@<instance>} (shown by {@code rabbitmqctl
     * list_connections} as {@code connection_name}, so an operator can tell whose it is). amqp-client
     * recovers it, its channels, consumers and declared topology after a network failure; the first
     * connection is not recovered, callers retry it. {@code recovered} is told each time amqp-client
     * has recovered the connection and its topology (run on amqp-client's recovery thread: it must
     * not block).
     */
    static Connection open(ConnectionSettings s, String channel, String role, ThreadFactory threads, ExecutorService executor,
                           Runnable recovered)
            throws IOException, TimeoutException {
        String name = "onceonly:" + channel + ":" + role + "@" + s.instance();
        ConnectionFactory f = new ConnectionFactory();
        f.setVirtualHost(s.virtualHost());
        if (s.credentials() != null) {
            f.setCredentialsProvider(s.credentials().provider());
        } else {
            f.setUsername(s.username());
            f.setPassword(s.password());
        }
        if (s.tls()) {
            try {
                // The JVM's default trust store (the server's, under Liberty); certificates are verified.
                f.useSslProtocol(SSLContext.getDefault());
            } catch (NoSuchAlgorithmException e) {
                throw new IOException("no TLS support in this JVM", e);
            }
            if (s.verifyHostname()) {
                f.enableHostnameVerification();
            }
        }
        f.setThreadFactory(threads);
        f.setAutomaticRecoveryEnabled(true);
        f.setTopologyRecoveryEnabled(true);
        // Delay queues are declared on channels closed right after (a recorded queue is recovered on
        // its own channel, which would fail), and again before use anyway.
        f.setTopologyRecoveryFilter(new TopologyRecoveryFilter() {
            @Override
            public boolean filterQueue(RecordedQueue queue) {
                return !DelayQueueNames.isDelayQueue(queue.getName());
            }
        });
        f.setNetworkRecoveryInterval(s.recoveryInterval().toMillis());
        int connectMillis = (int) Math.min(Integer.MAX_VALUE, s.connectionTimeout().toMillis());
        f.setConnectionTimeout(connectMillis);
        f.setHandshakeTimeout(connectMillis);
        // amqp-client waits 10 minutes for an RPC reply by default; a stuck cancel must not hold up a shutdown that long.
        f.setChannelRpcTimeout(RPC_TIMEOUT_MS);
        Connection c = f.newConnection(executor, s.addresses(), name);
        c.addShutdownListener(cause -> {
            if (!cause.isInitiatedByApplication()) {
                LogId.ONCE0503W.log(name, s.describe(), cause.getMessage());
            }
        });
        ((Recoverable) c).addRecoveryListener(new RecoveryListener() {
            @Override
            public void handleRecovery(Recoverable recoverable) {
                LogId.ONCE0504I.log(name, s.describe());
                recovered.run();
            }

            @Override
            public void handleRecoveryStarted(Recoverable recoverable) {
                // ONCE0503W already said the connection was lost.
            }
        });
        return c;
    }

    /**
     * Closes a connection, also one that is recovering (which a plain {@code close()} would leave
     * recovering). The broker requeues whatever the connection left unacked.
     */
    static void closeQuietly(Connection c) {
        if (c != null) {
            c.abort(CLOSE_TIMEOUT_MS);
        }
    }

    /** Closes a channel without waiting for the broker; a closed one is left as it is. */
    static void closeQuietly(Channel ch) {
        try {
            ch.abort();
        } catch (IOException | RuntimeException e) {
            // already closed
        }
    }

    /** amqp-client's IOException of a refused declaration has no message; the broker's reason is in its cause. */
    static String describe(Exception e) {
        Throwable t = e.getMessage() == null && e.getCause() != null ? e.getCause() : e;
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
