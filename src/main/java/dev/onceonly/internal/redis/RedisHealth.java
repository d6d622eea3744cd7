package dev.onceonly.internal.redis;

import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.exceptions.JedisException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Readiness of the Redis store: whether Redis answers now, naming the topology and the node that
 * does not answer (host and port only, never credentials).
 *
 * <p>Contract: {@link #problem()} never throws, and is bounded by the client's own timeouts.
 */
final class RedisHealth {

    private final RedisConnection connection;

    RedisHealth(RedisConnection connection) {
        this.connection = connection;
    }

    /**
     * Standalone and Sentinel: a PING to the (current) master. Cluster: the cluster state as a node
     * reports it and a PING to every master serving slots, so a master that is down shows until its
     * replica took over; a failed node that serves no slot does not make the store unready.
     *
     * @return empty when Redis answers, else why not
     */
    Optional<String> problem() {
        if (connection.jedis() instanceof RedisClusterClient cluster) {
            return clusterProblem(cluster);
        }
        try {
            return "PONG".equalsIgnoreCase(connection.jedis().ping()) ? Optional.empty()
                    : Optional.of(connection.topology() + " does not answer PING");
        } catch (JedisException e) {
            return Optional.of(connection.topology() + " does not answer PING (" + e.getClass().getSimpleName() + ")");
        }
    }

    private Optional<String> clusterProblem(RedisClusterClient cluster) {
        Map<String, ConnectionPool> nodes = new TreeMap<>(cluster.getClusterNodes());
        String view = null;
        String reporter = null;
        // The cluster's own view, from the first node that answers.
        for (Map.Entry<String, ConnectionPool> node : nodes.entrySet()) {
            try (Connection c = node.getValue().getResource()) {
                c.sendCommand(Protocol.Command.CLUSTER, "INFO");
                String info = c.getBulkReply();
                if (!info.contains("cluster_state:ok")) {
                    return Optional.of("cluster state is not ok (as " + node.getKey() + " reports it)");
                }
                c.sendCommand(Protocol.Command.CLUSTER, "NODES");
                view = c.getBulkReply();
                reporter = node.getKey();
                break;
            } catch (JedisException e) {
                // ask the next node
            }
        }
        if (view == null) {
            return Optional.of("cluster: no node answers (" + String.join(",", nodes.keySet()) + ")");
        }
        List<String> down = new ArrayList<>();
        for (String line : view.split("\n")) {
            String[] f = line.trim().split(" ");
            // id address flags master-id ping pong epoch link-state slot...: a master with slots.
            if (f.length < 9 || !f[2].contains("master")) {
                continue;
            }
            String address = f[1].contains("@") ? f[1].substring(0, f[1].indexOf('@')) : f[1];
            if (f[2].contains("fail") && !f[2].contains("fail?")) {
                down.add(address + " (failed, serving slots " + f[8] + (f.length > 9 ? "..." : "") + ")");
                continue;
            }
            ConnectionPool pool = nodes.get(address);
            try (Connection c = pool == null ? new Connection(HostAndPort.from(address), connection.nodeConfig())
                    : pool.getResource()) {
                c.ping();
            } catch (JedisException e) {
                down.add(address + " (" + e.getClass().getSimpleName() + ")");
            }
        }
        return down.isEmpty() ? Optional.empty()
                : Optional.of("cluster master(s) not answering PING: " + String.join(", ", down) + " (as " + reporter + " reports the cluster)");
    }
}
