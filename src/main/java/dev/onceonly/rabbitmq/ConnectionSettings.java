package dev.onceonly.rabbitmq;

import java.time.Duration;

/**
 * Where and how a channel connects to the broker.
 *
 * @param recoveryInterval  pause between reconnection attempts, for the first connection as for
 *                          amqp-client's automatic recovery
 * @param connectionTimeout bound on opening a connection (TCP connect and AMQP handshake); amqp-client's
 *                          own default (60 s) held up shutdowns behind an unreachable broker
 * @param instance          this instance's name in the connection names the broker shows
 */
record ConnectionSettings(String host, int port, String virtualHost, String username, String password,
                          boolean tls, boolean verifyHostname, Duration recoveryInterval, Duration connectionTimeout,
                          String instance) {

    /** {@code amqp[s]://user@host:port/vhost}, for logs: never the password. */
    String describe() {
        return (tls ? "amqps" : "amqp") + "://" + username + "@" + host + ":" + port
                + (virtualHost.startsWith("/") ? virtualHost : "/" + virtualHost);
    }

    @Override
    public String toString() {
        return describe();
    }
}
