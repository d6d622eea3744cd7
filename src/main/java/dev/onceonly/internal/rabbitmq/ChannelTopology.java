package dev.onceonly.internal.rabbitmq;

import java.util.ArrayList;
import java.util.List;

/**
 * What the connector declares on the broker for one channel, named from its validated settings:
 * what {@link Topology#declare} declares for an incoming channel (the queue, its exchange, the
 * dead-letter exchange and queue), every delay queue {@link DelayQueues} may declare for its
 * backoff ({@link DelayQueueNames}), and an outgoing channel's exchange. For
 * {@code bin/onceonly-topology}, which lists and deletes them.
 *
 * @param channel  the channel's name
 * @param declared whether the connector declares these ({@code declare=true}); otherwise an operator does
 * @param objects  the queues and exchanges, in the order they are safe to delete
 */
record ChannelTopology(String channel, boolean declared, List<BrokerObject> objects) {

    /** A queue or an exchange. */
    enum Kind {
        QUEUE, EXCHANGE
    }

    /**
     * One queue or exchange.
     *
     * @param role   what it is for the channel, as the listing shows it
     * @param shared whether others use it too (the exchange publishers publish to): deleted only when asked by name
     * @param maybe  whether the connector declares it only when needed (a delay queue, on the first retry of its delay)
     */
    record BrokerObject(Kind kind, String name, String role, boolean shared, boolean maybe) {
    }

    static ChannelTopology of(IncomingSettings s) {
        List<BrokerObject> objects = new ArrayList<>();
        for (var delay : s.backoff().brokerDelays()) {
            objects.add(new BrokerObject(Kind.QUEUE, DelayQueueNames.name(s.queue(), delay),
                    "delay queue, retries waiting " + delay.toMillis() + " ms", false, true));
        }
        objects.add(new BrokerObject(Kind.QUEUE, s.deadLetterQueue(), "dead-letter queue", false, false));
        objects.add(new BrokerObject(Kind.QUEUE, DeadLetterReaders.of(s.deadLetterQueue()),
                "the dead-letter queue's open reads, expires an hour after the last", false, true));
        objects.add(new BrokerObject(Kind.QUEUE, DeadLetterReaders.aloneOf(s.deadLetterQueue()),
                "the dead-letter queue's read alone (the ledger purge's), expires an hour after the "
                        + "last", false, true));
        objects.add(new BrokerObject(Kind.QUEUE, s.queue(), "queue", false, false));
        objects.add(new BrokerObject(Kind.EXCHANGE, s.deadLetterExchange(), "dead-letter exchange", false, false));
        if (!s.exchange().isEmpty()) {
            objects.add(new BrokerObject(Kind.EXCHANGE, s.exchange(), "exchange the queue is bound to", true, false));
        }
        return new ChannelTopology(s.channel(), s.declare(), List.copyOf(objects));
    }

    static ChannelTopology of(OutgoingSettings s) {
        List<BrokerObject> objects = s.exchange().isEmpty() ? List.of()
                : List.of(new BrokerObject(Kind.EXCHANGE, s.exchange(), "exchange published to", true, false));
        return new ChannelTopology(s.channel(), s.declare(), objects);
    }
}
