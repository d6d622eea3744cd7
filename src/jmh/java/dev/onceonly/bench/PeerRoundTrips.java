package dev.onceonly.bench;

import dev.onceonly.testing.RespProxy;
import redis.clients.jedis.HostAndPort;

import java.io.IOException;

/**
 * Round trips a {@link Peer} makes per message, counted on the wire: the peer talks to the
 * benchmark's Redis through a {@link RespProxy}, which counts every command a client sends. Not a
 * timing: a count, the same on every run.
 */
final class PeerRoundTrips {

    /** Commands for a new key and for a key processed before. */
    record Count(int fresh, int duplicate) {
    }

    private PeerRoundTrips() {
    }

    static Count count(Peer peer, HostAndPort redis) throws IOException {
        RedisRoundTripBenchmark.KeySource keys = new RedisRoundTripBenchmark.KeySource(peer.ordinal());
        try (RespProxy wire = new RespProxy(redis.getPort(), false);
             Peer.Client client = peer.open(new HostAndPort(redis.getHost(), wire.port()))) {
            // Connections opened, scripts cached: what every later message finds.
            String warm = keys.next();
            client.processed(warm);
            client.firstTime(warm);

            String processed = keys.next();
            client.processed(processed);
            int before = wire.commands();
            if (!client.firstTime(keys.next())) {
                throw new IllegalStateException(peer + ": a new key was not new");
            }
            int fresh = wire.commands() - before;
            before = wire.commands();
            if (client.firstTime(processed)) {
                throw new IllegalStateException(peer + ": a processed key was new");
            }
            return new Count(fresh, wire.commands() - before);
        }
    }
}
