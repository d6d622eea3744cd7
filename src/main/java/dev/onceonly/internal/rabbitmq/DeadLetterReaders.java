package dev.onceonly.internal.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.ShutdownSignalException;
import dev.onceonly.api.OnceOnlyException;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * The reads open on one dead-letter queue, each registered as a consumer of the queue's readers'
 * queue ({@code <dead-letter queue>.readers}, holding no message, expiring an hour after its last
 * use); a read alone registers exclusively. The broker refuses an exclusive consumer beside any
 * other, and any consumer beside an exclusive one, and ends a registration with its AMQP channel,
 * when it also gives back what the read held. So a read alone runs only while no other read holds
 * a dead letter, and it sees every one: what the ledger purge's pin needs, as {@code basic.get}
 * never returns a message another read holds unacknowledged. (A reader outside the library is not
 * registered.)
 */
final class DeadLetterReaders {

    private static final long EXPIRE_MS = Duration.ofHours(1).toMillis();
    /** How often, and how far apart, a read tries to register while a read alone runs: about ten seconds. */
    private static final int ATTEMPTS = 50;
    private static final Duration PAUSE = Duration.ofMillis(200);

    /** What the failures name: the dead-letter queue and its channel. */
    private final String describe;
    private final String readers;
    private final String announced;
    private final DeadLetterEndpoint.ChannelSource channels;

    DeadLetterReaders(String channel, String queue, DeadLetterEndpoint.ChannelSource channels) {
        this.describe = "dead-letter queue '" + queue + "' of channel '" + channel + "'";
        this.readers = of(queue);
        this.announced = aloneOf(queue);
        this.channels = channels;
    }

    /** {@return where the reads of the dead-letter queue {@code queue} register} */
    static String of(String queue) {
        return queue + ".readers";
    }

    /**
     * {@return where a read alone of the dead-letter queue {@code queue} announces itself before it
     * registers} Every read looks there first and waits while one is announced, so that a refused
     * registration stays a rare race: some brokers answer it by closing the whole connection (Qpid
     * Broker-J, the demo's embedded one, does), not only the channel as RabbitMQ does.
     */
    static String aloneOf(String queue) {
        return of(queue) + ".alone";
    }

    /**
     * An AMQP channel registered as a read; one that finds a read alone running waits for it (it
     * reads each dead letter once, then ends).
     *
     * @throws OnceOnlyException when a read alone still runs after about ten seconds, or the broker cannot be reached
     */
    Channel open() {
        for (int attempt = 1; ; attempt++) {
            try {
                return register(false);
            } catch (Busy busy) {
                if (attempt == ATTEMPTS) {
                    throw new OnceOnlyException(describe + ": another read of the queue runs alone (the ledger "
                            + "purge's); try again",
                            busy);
                }
                pause();
            }
        }
    }

    /**
     * An AMQP channel registered as the one read, refused at once while another read is open.
     *
     * @throws OnceOnlyException when another read is open, or the broker cannot be reached
     */
    Channel openAlone() {
        try {
            return register(true);
        } catch (Busy busy) {
            throw new OnceOnlyException(describe + ": another read of the queue is open and may hold dead "
                    + "letters", busy);
        }
    }

    private Channel register(boolean alone) throws Busy {
        Channel ch = null;
        try {
            ch = channels.open();
            ch.queueDeclare(announced, false, false, false, Map.of("x-expires", EXPIRE_MS));
            ch.queueDeclare(readers, false, false, false, Map.of("x-expires", EXPIRE_MS));
            if (alone) {
                // Announced first, then checked: a read that starts now waits rather than collides.
                ch.basicConsume(announced, true, "", false, false, Map.of(), new DefaultConsumer(ch));
                if (ch.queueDeclarePassive(readers).getConsumerCount() > 0) {
                    throw new Busy("another read is open");
                }
            } else if (ch.queueDeclarePassive(announced).getConsumerCount() > 0) {
                throw new Busy("a read alone runs");
            }
            try {
                ch.basicConsume(readers, true, "", false, alone, Map.of(), new DefaultConsumer(ch));
            } catch (IOException e) {
                if (refused(e)) {
                    throw new Busy(e);
                }
                throw e;
            }
            return ch;
        } catch (IOException | TimeoutException | RuntimeException e) {
            if (ch != null) {
                Connections.closeQuietly(ch);
            }
            if (e instanceof Busy busy) {
                throw busy;
            }
            throw new OnceOnlyException(describe + ": cannot read (" + Connections.describe(e) + ")", e);
        }
    }

    /** The broker refused the registration: a read alone runs, or (for one) another read is open. */
    private static boolean refused(IOException e) {
        return e.getCause() instanceof ShutdownSignalException sig
                && sig.getReason() instanceof AMQP.Channel.Close close
                && close.getReplyCode() == AMQP.ACCESS_REFUSED;
    }

    /** Another read's registration stood in the way of this one's. */
    private static final class Busy extends RuntimeException {
        Busy(IOException cause) {
            super(cause.getMessage(), cause, false, false);
        }

        Busy(String why) {
            super(why, null, false, false);
        }
    }

    private static void pause() {
        try {
            Thread.sleep(PAUSE.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OnceOnlyException("interrupted while waiting to read the dead-letter queue", e);
        }
    }
}
