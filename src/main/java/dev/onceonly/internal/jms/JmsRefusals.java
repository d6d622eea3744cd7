package dev.onceonly.internal.jms;

import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.support.LogId;
import jakarta.jms.BytesMessage;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.Queue;
import jakarta.jms.TextMessage;

import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What a guarded Jakarta Messaging listener does with a refusal of the guard, so that it fits the
 * listener's transaction (container-managed: the receipt, the ledger row and the business writes
 * commit or roll back together):
 * <ul>
 *   <li>{@code BUSY}, {@code RETRY}: held for the retry delay, then thrown: the transaction rolls
 *       back and the provider redelivers, with its own delay and redelivery limit;</li>
 *   <li>{@code CONFLICT}, {@code REJECTED}: moved to the dead-letter queue with the reason, in the
 *       listener's transaction, when one is configured and the transaction may still commit; the
 *       receipt then commits with the move. Otherwise thrown, like a failure: the provider's
 *       redelivery limit and exception destination take the message;</li>
 *   <li>anything else (a {@code DUPLICATE} found by the ledger, which spoiled the transaction):
 *       thrown.</li>
 * </ul>
 * Thread-safe.
 */
public final class JmsRefusals {

    /** Properties a dead letter carries; JMS property names must be Java identifiers. */
    static final String OUTCOME = "onceonly_outcome";
    static final String REASON = "onceonly_reason";
    static final String CONSUMER = "onceonly_consumer";
    static final String KEY = "onceonly_key";
    static final String ATTEMPTS = "onceonly_attempts";
    static final String DESTINATION = "onceonly_destination";
    static final String MESSAGE_ID = "onceonly_message_id";

    private final Duration retryDelay;
    private final ConnectionFactory factory;
    private final Queue deadLetterQueue;
    private final BooleanSupplier rollbackOnly;
    private final Hold holding;

    /** How a BUSY or RETRY delivery is held: the listener's thread sleeps. */
    @FunctionalInterface
    interface Hold {
        /**
         * Waits {@code delay}.
         *
         * @param delay how long
         * @throws InterruptedException when the thread is interrupted (the server is stopping)
         */
        void hold(Duration delay) throws InterruptedException;
    }

    /**
     * Refusal handling for guarded listeners.
     *
     * @param retryDelay      how long a BUSY or RETRY delivery is held before its rollback
     * @param factory         sends to the dead-letter queue; {@code null} when there is none
     * @param deadLetterQueue where CONFLICT and REJECTED messages go; {@code null} for none
     * @param rollbackOnly    whether the current transaction can only roll back
     */
    public JmsRefusals(Duration retryDelay, ConnectionFactory factory, Queue deadLetterQueue, BooleanSupplier rollbackOnly) {
        this(retryDelay, factory, deadLetterQueue, rollbackOnly, delay -> Thread.sleep(delay.toMillis()));
    }

    /** As above, holding BUSY and RETRY deliveries through {@code holding} (a simulation waits on its own clock). */
    JmsRefusals(Duration retryDelay, ConnectionFactory factory, Queue deadLetterQueue, BooleanSupplier rollbackOnly, Hold holding) {
        this.retryDelay = retryDelay;
        this.factory = factory;
        this.deadLetterQueue = deadLetterQueue;
        this.rollbackOnly = rollbackOnly;
        this.holding = holding;
    }

    /**
     * Settles a refusal as the class describes.
     *
     * @param view    the delivery the guard refused
     * @param refused the guard's refusal
     * @throws MessageRefusedException {@code refused}, unless the message was moved to the dead-letter queue
     */
    public void settle(JmsMessageView view, MessageRefusedException refused) {
        Outcome outcome = refused.outcome();
        if (outcome == Outcome.BUSY || outcome == Outcome.RETRY) {
            hold();
            throw refused;
        }
        if (!outcome.isPermanent() || deadLetterQueue == null || rollbackOnly.getAsBoolean()) {
            throw refused;
        }
        try (JMSContext context = factory.createContext()) {
            context.createProducer().send(deadLetterQueue, deadLetter(context, view, refused));
        } catch (JMSException | RuntimeException e) {
            // Not moved: the rollback redelivers it, and the provider's limit still takes it aside.
            LogId.ONCE0702W.log(refused.consumer(), refused.keyDigest(), outcome, e.getClass().getName());
            throw refused;
        }
        LogId.ONCE0701W.log(refused.consumer(), refused.keyDigest(), outcome, view.attempt(), queueName(), refused.reason());
    }

    private void hold() {
        try {
            holding.hold(retryDelay);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // stopping: roll back at once
        }
    }

    /** A new message of the same kind (text, else bytes), with the original's properties and the reason. */
    private static Message deadLetter(JMSContext context, JmsMessageView view, MessageRefusedException refused) throws JMSException {
        Message original = view.message();
        Message letter = original instanceof TextMessage t ? context.createTextMessage(t.getText())
                : bytes(context, view.body());
        for (Map.Entry<String, Object> p : view.headers().entrySet()) {
            // JMSX* properties are the provider's to set.
            if (!p.getKey().startsWith("JMSX") && p.getValue() != null) {
                letter.setObjectProperty(p.getKey(), p.getValue());
            }
        }
        if (original.getJMSCorrelationID() != null) {
            letter.setJMSCorrelationID(original.getJMSCorrelationID());
        }
        if (original.getJMSType() != null) {
            letter.setJMSType(original.getJMSType());
        }
        letter.setStringProperty(OUTCOME, refused.outcome().name());
        letter.setStringProperty(REASON, refused.reason());
        letter.setStringProperty(CONSUMER, refused.consumer());
        letter.setStringProperty(KEY, refused.keyDigest());
        letter.setIntProperty(ATTEMPTS, view.attempt());
        letter.setStringProperty(DESTINATION, view.exchange());
        if (view.messageId() != null) {
            letter.setStringProperty(MESSAGE_ID, view.messageId());
        }
        return letter;
    }

    private static BytesMessage bytes(JMSContext context, byte[] body) throws JMSException {
        BytesMessage b = context.createBytesMessage();
        b.writeBytes(body);
        return b;
    }

    private String queueName() {
        try {
            return deadLetterQueue.getQueueName();
        } catch (JMSException e) {
            return deadLetterQueue.toString();
        }
    }
}
