package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.internal.support.LogId;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Declares what an incoming channel consumes from and dead-letters to (unless {@code declare=false}). */
final class Topology {

    private Topology() {
    }

    /** @return the channel to consume on (a new one when the queue declaration was refused and closed the first) */
    static Channel declare(Connection connection, Channel ch, IncomingSettings settings) throws IOException {
        ch = declareQueue(connection, ch, settings);
        if (!settings.exchange().isEmpty()) {
            ch.exchangeDeclare(settings.exchange(), settings.exchangeType(), true);
            for (String key : settings.routingKeys()) {
                ch.queueBind(settings.queue(), settings.exchange(), key);
            }
        }
        ch.exchangeDeclare(settings.deadLetterExchange(), settings.deadLetterExchangeType(), true);
        ch = declareDeadLetterQueue(connection, ch, settings);
        ch.queueBind(settings.deadLetterQueue(), settings.deadLetterExchange(), settings.deadLetterRoutingKey());
        return ch;
    }

    /**
     * Declares the dead-letter queue with the queue's type. A classic queue lives on the one node
     * that declared it: in a cluster, while that node is down, the channel could neither declare it
     * (404, at every reconnection) nor dead-letter into it, so a quorum queue's dead letters get a
     * quorum queue, replicated like the queue itself. One that exists as a classic queue (declared
     * before this) is used as it is, with a warning.
     */
    private static Channel declareDeadLetterQueue(Connection connection, Channel ch, IncomingSettings settings) throws IOException {
        Map<String, Object> args = settings.queueType() == QueueType.QUORUM ? Map.of("x-queue-type", "quorum") : null;
        try {
            ch.queueDeclare(settings.deadLetterQueue(), true, false, false, args);
            return ch;
        } catch (IOException e) {
            if (!(e.getCause() instanceof ShutdownSignalException sig) || !sig.getMessage().contains("PRECONDITION_FAILED")) {
                throw e;
            }
            LogId.ONCE0515W.log(settings.channel(), settings.deadLetterQueue(), args, inequivalence(sig));
            Channel again = connection.createChannel();
            again.queueDeclarePassive(settings.deadLetterQueue());
            return again;
        }
    }

    /**
     * Declares the queue. A quorum queue gets an explicit delivery limit and dead-letter target, so
     * that the broker's own limit (which counts only returns the connector did not make: crashed
     * consumers, dropped connections) lands in the dead-letter queue instead of dropping the
     * message (RabbitMQ 4.0 drops at 20 by default). A classic queue gets the dead-letter target
     * only when its arguments let the broker dead-letter on its own (message TTL, a length limit
     * that drops), so expired or dropped messages land in the dead-letter queue too; without such
     * arguments it is declared with none, as before they existed. A queue that already exists with
     * other arguments is used as it is, with a warning: redeclaring it would need deleting it.
     */
    private static Channel declareQueue(Connection connection, Channel ch, IncomingSettings settings) throws IOException {
        Map<String, Object> args = arguments(settings);
        try {
            ch.queueDeclare(settings.queue(), true, false, false, args.isEmpty() ? null : args);
            return ch;
        } catch (IOException e) {
            if (!(e.getCause() instanceof ShutdownSignalException sig) || !sig.getMessage().contains("PRECONDITION_FAILED")) {
                throw e;
            }
            if (settings.queueType() == QueueType.QUORUM) {
                LogId.ONCE0511W.log(settings.channel(), settings.queue(), settings.deliveryLimit(), settings.deadLetterExchange());
            }
            if (!settings.queueArguments().asMap().isEmpty() || settings.queueType() == QueueType.CLASSIC) {
                // The broker's reply names the first argument that differs; it holds no secret.
                LogId.ONCE0515W.log(settings.channel(), settings.queue(), args, inequivalence(sig));
            }
            Channel again = connection.createChannel();
            again.queueDeclarePassive(settings.queue());
            return again;
        }
    }

    /** The arguments {@code settings} ask for, in a stable order (empty: none). */
    static Map<String, Object> arguments(IncomingSettings settings) {
        Map<String, Object> args = new LinkedHashMap<>();
        QueueArguments optional = settings.queueArguments();
        if (settings.queueType() == QueueType.QUORUM) {
            args.put("x-queue-type", "quorum");
            args.put("x-delivery-limit", settings.deliveryLimit());
        }
        if (settings.queueType() == QueueType.QUORUM || optional.brokerDeadLetters()) {
            args.put("x-dead-letter-exchange", settings.deadLetterExchange());
            args.put("x-dead-letter-routing-key", settings.deadLetterRoutingKey());
        }
        args.putAll(optional.asMap());
        return args;
    }

    private static String inequivalence(ShutdownSignalException sig) {
        String m = String.valueOf(sig.getReason() instanceof com.rabbitmq.client.AMQP.Channel.Close close
                ? close.getReplyText() : sig.getMessage());
        return m.length() <= 300 ? m : m.substring(0, 300) + "...";
    }
}
