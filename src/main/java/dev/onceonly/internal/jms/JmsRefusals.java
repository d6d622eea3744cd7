package dev.onceonly.internal.jms;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.support.LogId;
import jakarta.jms.BytesMessage;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.ObjectMessage;
import jakarta.jms.Queue;
import jakarta.jms.TextMessage;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a guarded Jakarta Messaging listener does with a refusal of the guard or a failure of its
 * handler, so that it fits the listener's transaction (container-managed: the receipt, the ledger
 * row and the business writes commit or roll back together). A rollback for redelivery marks the
 * transaction rollback-only and lets the listener return: an exception would reach the container,
 * which logs it as an error with its diagnostic incidents, for an outcome handled here. Without a
 * transaction to mark (a listener outside one), it is thrown instead:
 * <ul>
 *   <li>{@code BUSY}, {@code RETRY}: held for the retry delay, then rolled back: the provider
 *       redelivers, with its own delay and redelivery limit;</li>
 *   <li>{@code FAILED} (the handler threw, or the commit failed): rolled back, one line
 *       ({@link LogId#ONCE0704W}) per delivery, the stack trace with the first of a message (as far
 *       as this instance remembers: the provider, not OnceOnly, sees its last delivery);</li>
 *   <li>{@code CONFLICT}, {@code REJECTED}: moved to the dead-letter queue with the reason, in the
 *       listener's transaction, when one is configured and the transaction may still commit; the
 *       receipt then commits with the move (never an {@code ObjectMessage}: its copy would need its
 *       object deserialized). Otherwise thrown, like a failure: the provider's redelivery limit and
 *       exception destination take the message;</li>
 *   <li>any other refusal (a {@code DUPLICATE} found by the ledger, which spoiled the transaction):
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
    private final ListenerTransaction transaction;
    private final Hold holding;
    /** Messages (consumer and key digest) whose failure's stack trace was logged; the latest {@link #TRACED} only. */
    private final Set<String> traced = Collections.newSetFromMap(Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > TRACED;
        }
    }));
    private static final int TRACED = 1024;

    /** The transaction the listener's delivery runs in: the container's. */
    public interface ListenerTransaction {
        /**
         * {@return whether it can only roll back}
         */
        boolean rollbackOnly();

        /**
         * Marks it rollback-only, so that it rolls back when the listener returns and the provider
         * redelivers the message.
         *
         * @return {@code false} when there is no transaction to mark: the caller must throw instead
         */
        boolean markRollbackOnly();
    }

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
     * @param transaction     the current transaction, the listener's
     */
    public JmsRefusals(Duration retryDelay, ConnectionFactory factory, Queue deadLetterQueue, ListenerTransaction transaction) {
        this(retryDelay, factory, deadLetterQueue, transaction, delay -> Thread.sleep(delay.toMillis()));
    }

    /** As above, holding BUSY and RETRY deliveries through {@code holding} (a simulation waits on its own clock). */
    JmsRefusals(Duration retryDelay, ConnectionFactory factory, Queue deadLetterQueue, ListenerTransaction transaction, Hold holding) {
        this.retryDelay = retryDelay;
        this.factory = factory;
        this.deadLetterQueue = deadLetterQueue;
        this.transaction = transaction;
        this.holding = holding;
    }

    /**
     * Settles a refusal as the class describes.
     *
     * @param view    the delivery the guard refused
     * @param refused the guard's refusal
     * @throws MessageRefusedException {@code refused}, unless the message was moved to the dead-letter
     *                                 queue or, {@code BUSY} or {@code RETRY}, its transaction marked rollback-only
     */
    public void settle(JmsMessageView view, MessageRefusedException refused) {
        Outcome outcome = refused.outcome();
        if (outcome == Outcome.BUSY || outcome == Outcome.RETRY) {
            hold();
            if (!transaction.markRollbackOnly()) {
                throw refused;
            }
            return;
        }
        // An ObjectMessage is not copied: only its object, deserialized, would make the copy. Rolled
        // back, it meets the provider's redelivery limit, which moves the original as it is.
        if (!outcome.isPermanent() || deadLetterQueue == null || transaction.rollbackOnly()
                || view.message() instanceof ObjectMessage) {
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

    /**
     * A failure of the handler (or of the commit): rolled back for redelivery, logged as the class describes.
     *
     * @param view    the delivery whose handler failed
     * @param decided the guard's decision as known when the handler returned (consumer, key digest)
     * @param failure what the guarded call threw: an exception or an error
     * @throws Exception {@code failure}, when there is no transaction to mark rollback-only
     */
    public void failed(JmsMessageView view, GuardEvent decided, Throwable failure) throws Exception {
        if (!transaction.markRollbackOnly()) {
            if (failure instanceof Error e) {
                throw e;
            }
            throw (Exception) failure;
        }
        Object[] line = {decided.consumer(), view.attempt(), decided.keyDigest(), innermostClass(failure)};
        if (traced.add(decided.consumer() + " " + decided.keyDigest())) {
            LogId.ONCE0704W.logWithTrace(failure, line);
        } else {
            LogId.ONCE0704W.log(line);
        }
    }

    /** The innermost cause's class: its message may quote the body; wrappers say nothing about the message. */
    private static String innermostClass(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getName();
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
