package dev.onceonly.cdi;

import dev.onceonly.support.LogId;
import dev.onceonly.jpa.JpaLedger;
import dev.onceonly.jpa.JtaTransactionRunner;
import dev.onceonly.jpa.LedgerSchema;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.UserTransaction;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Clock;

/**
 * The JTA transaction runner and the JPA ledger, for {@link OnceOnlyRuntime}. Nothing here touches
 * the database until the runtime asks for the ledger, which it does only when a consumer has
 * {@code ledger=true}.
 */
@ApplicationScoped
public class LedgerBeans {

    /** The persistence unit holding {@link dev.onceonly.jpa.ProcessedMessage}; on the business data's datasource. */
    public static final String PERSISTENCE_UNIT = "onceonly";
    /** That datasource (persistence.xml), for {@code onceonly.ledger.create-schema}. */
    static final String DATASOURCE = "jdbc/onceonly";

    @PersistenceContext(unitName = PERSISTENCE_UNIT)
    EntityManager em;

    @Inject
    RequiresNewTransaction newTransaction;

    @Inject
    OnceOnlyExtension extension;

    /** Created when the runtime first uses it, which happens only when a consumer has the ledger on. */
    @Produces
    @ApplicationScoped
    Ledger ledger() {
        if (extension.ledgerSettings().createSchema()) {
            createSchema();
        }
        return new JpaLedger(em, newTransaction, Clock.systemUTC());
    }

    private static void createSchema() {
        try {
            LogId.ONCE0406I.log(LedgerSchema.apply((DataSource) new InitialContext().lookup(DATASOURCE)));
        } catch (NamingException | SQLException e) {
            throw new IllegalStateException("onceonly.ledger.create-schema=true, but applying the ledger DDL through "
                    + DATASOURCE + " failed: " + e, e);
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
