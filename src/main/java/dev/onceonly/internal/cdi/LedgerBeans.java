package dev.onceonly.internal.cdi;

import dev.onceonly.internal.support.LogId;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.ledger.jpa.JpaLedger;
import dev.onceonly.internal.ledger.jpa.JpaResultStore;
import dev.onceonly.internal.jta.JtaTransactionRunner;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.ledger.jpa.LedgerSessions;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.UserTransaction;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Optional;

/**
 * The JTA transaction runner and the JPA ledger, for the guard's composition root. Nothing here touches
 * the database until the runtime asks for the ledger, which it does only when a consumer has
 * {@code ledger=true}.
 */
@ApplicationScoped
public class LedgerBeans {

    @Inject
    RequiresNewTransaction newTransaction;

    @Inject
    OnceOnlyExtension extension;

    private LedgerSessions sessions;

    /**
     * Created when the runtime first uses it, which happens only when a consumer has the ledger on;
     * on the datasource {@code onceonly.ledger.datasource} names, checked once to join the JTA
     * transaction.
     *
     * @throws InvalidConfigurationException naming {@code onceonly.ledger.datasource} when its
     *         connections do not join the transaction
     */
    @Produces
    @ApplicationScoped
    Ledger ledger() {
        String table = extension.ledgerSettings().table();
        createTable(LedgerSchema.Part.LEDGER, table);
        return checkedForTransactions(new JpaLedger(extension.global().keyPrefix(), table, sessions()::current, newTransaction,
                Clock.systemUTC()), extension.ledgerSettings().dataSource());
    }

    /**
     * The results kept in the ledger's table, for the consumers with the ledger on that keep them;
     * asked for after the {@link #ledger()}, which created the table.
     *
     * @return the store, and what the table lacks for it
     */
    ResultKeepers.LedgerResults results() {
        JpaResultStore store = new JpaResultStore(extension.ledgerSettings().table(), sessions()::current, newTransaction,
                Clock.systemUTC());
        return new ResultKeepers.LedgerResults(store, store.problem());
    }

    /**
     * The sessions on the datasource {@code onceonly.ledger.datasource} names, built on first use
     * (by the ledger or the outbox, which share them).
     */
    synchronized LedgerSessions sessions() {
        if (sessions == null) {
            OnceOnlyConfig.LedgerSettings settings = extension.ledgerSettings();
            sessions = LedgerSessions.on(dataSource(settings.dataSource()), settings.table());
        }
        return sessions;
    }

    /**
     * Applies a part's shipped DDL for its table on the ledger's datasource, when
     * {@code onceonly.ledger.create-schema=true}: called by the part that uses the table (the ledger,
     * the outbox), so that no table is created that the application does not use.
     *
     * @param part  the part
     * @param table its configured table
     */
    void createTable(LedgerSchema.Part part, String table) {
        OnceOnlyConfig.LedgerSettings settings = extension.ledgerSettings();
        if (settings.createSchema()) {
            try {
                LogId.ONCE0406I.log(LedgerSchema.apply(dataSource(settings.dataSource()), part, table));
            } catch (SQLException e) {
                throw new IllegalStateException("onceonly.ledger.create-schema=true, but applying the DDL of " + table
                        + " through " + settings.dataSource() + " failed: " + e, e);
            }
        }
    }

    /**
     * The ledger, once its writes are seen to commit and roll back with their transaction
     * ({@link JpaLedger#transactionProblem}).
     *
     * @param jndiName the ledger's datasource, for the message
     * @throws InvalidConfigurationException naming {@code onceonly.ledger.datasource} when they do not
     */
    static JpaLedger checkedForTransactions(JpaLedger ledger, String jndiName) {
        Optional<String> problem = ledger.transactionProblem();
        if (problem.isPresent()) {
            throw new InvalidConfigurationException("onceonly.ledger.datasource", jndiName,
                    "a datasource whose connections join the JTA transaction (on Liberty, not transactional=\"false\"): "
                            + problem.get());
        }
        return ledger;
    }

    /** Closes the sessions: called by the composition root once no guarded call runs and the outbox relay stopped. */
    synchronized void closeSessions() {
        if (sessions != null) {
            sessions.close();
            sessions = null;
        }
    }

    private static DataSource dataSource(String jndiName) {
        try {
            return (DataSource) new InitialContext().lookup(jndiName);
        } catch (NamingException | ClassCastException e) {
            throw new InvalidConfigurationException("onceonly.ledger.datasource", jndiName,
                    "the JNDI name of the business data's JTA datasource (the lookup failed with " + e + ")");
        }
    }

    /**
     * The JTA runner where the server has a transaction manager, else {@link TransactionRunner#NONE}
     * (a plain CDI container, a server without a transactional feature).
     */
    @Produces
    @Dependent
    static TransactionRunner transactions() {
        try {
            InitialContext jndi = new InitialContext();
            return new JtaTransactionRunner((UserTransaction) jndi.lookup("java:comp/UserTransaction"),
                    (TransactionSynchronizationRegistry) jndi.lookup("java:comp/TransactionSynchronizationRegistry"));
        } catch (NamingException e) {
            return TransactionRunner.NONE;
        }
    }
}
