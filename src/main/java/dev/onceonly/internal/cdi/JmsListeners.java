package dev.onceonly.internal.cdi;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.jms.JmsRefusals;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;
import jakarta.jms.ConnectionFactory;
import jakarta.jms.Queue;
import jakarta.transaction.Status;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import java.util.List;

/**
 * Wires the refusal handling of guarded Jakarta Messaging listeners from {@code onceonly.jms.*}.
 * Loaded only when the application has such listeners, so that others never need the JMS API.
 */
final class JmsListeners {

    private JmsListeners() {
    }

    /**
     * Looks up what the settings name; fails the start naming the property when a name does not
     * resolve to the right kind of object.
     */
    static JmsRefusals refusals(OnceOnlyConfig.JmsSettings settings, List<String> consumers) {
        ConnectionFactory factory = null;
        Queue queue = null;
        if (!settings.deadLetterQueue().isEmpty()) {
            queue = lookup("onceonly.jms.dead-letter-queue", settings.deadLetterQueue(), Queue.class, "the JNDI name of a jakarta.jms.Queue");
            factory = lookup("onceonly.jms.connection-factory", settings.connectionFactory(), ConnectionFactory.class,
                    "the JNDI name of a jakarta.jms.ConnectionFactory");
        }
        TransactionSynchronizationRegistry registry = lookup("java:comp/TransactionSynchronizationRegistry",
                "java:comp/TransactionSynchronizationRegistry", TransactionSynchronizationRegistry.class, "a server with JTA");
        LogId.ONCE0703I.log(consumers, queue == null ? "rolled back for the provider's redelivery limit and exception destination"
                : "moved to " + settings.deadLetterQueue(), Durations.format(settings.retryDelay()));
        return new JmsRefusals(settings.retryDelay(), factory, queue, new JmsRefusals.ListenerTransaction() {
            @Override
            public boolean rollbackOnly() {
                return registry.getTransactionStatus() == Status.STATUS_MARKED_ROLLBACK;
            }

            @Override
            public boolean markRollbackOnly() {
                int status = registry.getTransactionStatus();
                if (status != Status.STATUS_ACTIVE && status != Status.STATUS_MARKED_ROLLBACK) {
                    return false;
                }
                registry.setRollbackOnly();
                return true;
            }
        });
    }

    private static <T> T lookup(String property, String name, Class<T> type, String expected) {
        try {
            return type.cast(new InitialContext().lookup(name));
        } catch (NamingException | ClassCastException e) {
            throw new InvalidConfigurationException(property, name, expected + "; the lookup failed with " + e);
        }
    }
}
