package dev.onceonly.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.support.LogId;

import java.io.IOException;
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
        ch.queueDeclare(settings.deadLetterQueue(), true, false, false, null);
        ch.queueBind(settings.deadLetterQueue(), settings.deadLetterExchange(), settings.deadLetterRoutingKey());
        return ch;
    }

    /**
     * Declares the queue. A quorum queue gets an explicit delivery limit and dead-letter target, so
     * that the broker's own limit (which counts only returns the connector did not make: crashed
     * consumers, dropped connections) lands in the dead-letter queue instead of dropping the
     * message (RabbitMQ 4.0 drops at 20 by default). A queue that already exists with other
     * arguments is used as it is, with a warning: redeclaring it would need deleting it.
     */
    private static Channel declareQueue(Connection connection, Channel ch, IncomingSettings settings) throws IOException {
        if (settings.queueType() != QueueType.QUORUM) {
            ch.queueDeclare(settings.queue(), true, false, false, null);
            return ch;
        }
        Map<String, Object> args = Map.of("x-queue-type", "quorum", "x-delivery-limit", settings.deliveryLimit(),
                "x-dead-letter-exchange", settings.deadLetterExchange(),
                "x-dead-letter-routing-key", settings.deadLetterRoutingKey());
        try {
            ch.queueDeclare(settings.queue(), true, false, false, args);
            return ch;
        } catch (IOException e) {
            if (!(e.getCause() instanceof ShutdownSignalException sig) || !sig.getMessage().contains("PRECONDITION_FAILED")) {
                throw e;
            }
            LogId.ONCE0511W.log(settings.channel(), settings.queue(), settings.deliveryLimit(), settings.deadLetterExchange());
            Channel again = connection.createChannel();
            again.queueDeclarePassive(settings.queue());
            return again;
        }
    }
}
