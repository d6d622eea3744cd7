package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.impl.CredentialsProvider;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Where and how a channel connects to the broker.
 *
 * @param addresses         the broker nodes, each with its port; amqp-client tries them in a shuffled
 *                          order at every (re)connection, so the instances of an application spread
 *                          over a cluster's nodes and a connection recovers to any node that answers
 * @param recoveryInterval  pause between reconnection attempts, for the first connection as for
 *                          amqp-client's automatic recovery
 * @param connectionTimeout bound on opening a connection (TCP connect and AMQP handshake); amqp-client's
 *                          own default (60 s) held up shutdowns behind an unreachable broker
 * @param instance          this instance's name in the connection names the broker shows
 * @param credentials       the application's provider of username and password (asked at every
 *                          connection and recovery, so a rotated password is picked up), named by
 *                          {@code credentials-provider-name}; {@code null}: {@code username} and
 *                          {@code password}
 */
record ConnectionSettings(List<Address> addresses, String virtualHost, String username, String password,
                          boolean tls, boolean verifyHostname, Duration recoveryInterval, Duration connectionTimeout,
                          String instance, NamedCredentials credentials) {

    /** A credentials provider with the name it was configured by (for logs). */
    record NamedCredentials(String name, CredentialsProvider provider) {
    }

    /** {@code amqp[s]://user@host:port/vhost}, for logs: never the password. */
    String describe() {
        return (tls ? "amqps" : "amqp") + "://" + (credentials == null ? username : "<" + credentials.name() + ">") + "@"
                + addresses.stream().map(a -> a.getHost() + ":" + a.getPort()).collect(Collectors.joining(","))
                + (virtualHost.startsWith("/") ? virtualHost : "/" + virtualHost);
    }

    @Override
    public String toString() {
        return describe();
    }
}
