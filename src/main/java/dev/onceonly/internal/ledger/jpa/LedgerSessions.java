package dev.onceonly.internal.ledger.jpa;

import jakarta.persistence.EntityManager;
import org.hibernate.SessionFactory;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.engine.transaction.jta.platform.internal.NoJtaPlatform;
import org.hibernate.engine.transaction.jta.platform.spi.JtaPlatform;

import javax.sql.DataSource;

/**
 * The ledger's own Hibernate session factory, built on the application's datasource: only
 * {@link ProcessedMessage}, no persistence unit.
 *
 * <p>Why not a persistence unit: a unit shipped in the library jar is started by the server for
 * every application, whatever datasource it has; where {@code jdbc/onceonly} does not exist, its
 * start fails with an error in the log (Liberty: CWWJP0015E) although nothing uses it. Built here,
 * the ledger starts only when a consumer turns it on, on the datasource the configuration names, and
 * the application keeps its own persistence units, provider and datasource untouched.
 *
 * <p>Why it still commits with the business data: the sessions take part in the caller's JTA
 * transaction (Hibernate's JTA coordinator, platform detected from the server), and connections of
 * one datasource within one transaction are the same shared connection, so the ledger row and the
 * business writes commit or roll back together without two-phase commit.
 *
 * <p>{@link #current()} is the session of the calling thread's JTA transaction (Hibernate's
 * {@code jta} current-session context): the same one for every call within a transaction, closed
 * when it completes; a new one inside a {@code REQUIRES_NEW} transaction.
 */
public final class LedgerSessions implements AutoCloseable {

    private final SessionFactory factory;

    private LedgerSessions(SessionFactory factory) {
        this.factory = factory;
    }

    /**
     * Builds the session factory; Hibernate reads the database's metadata once, to choose its dialect.
     *
     * @param dataSource the datasource of the business data, which the ledger's table is in
     * @return the sessions, to close when the application stops
     * @throws IllegalStateException when Hibernate finds no JTA transaction manager on this server
     */
    public static LedgerSessions on(DataSource dataSource) {
        StandardServiceRegistry registry = new StandardServiceRegistryBuilder()
                .applySetting(AvailableSettings.DATASOURCE, dataSource)
                .applySetting(AvailableSettings.TRANSACTION_COORDINATOR_STRATEGY, "jta")
                .applySetting(AvailableSettings.CURRENT_SESSION_CONTEXT_CLASS, "jta")
                // The shipped DDL owns the schema (LedgerSchema); Hibernate never changes it.
                .applySetting(AvailableSettings.HBM2DDL_AUTO, "none")
                .build();
        SessionFactory factory;
        try {
            factory = new MetadataSources(registry).addAnnotatedClass(ProcessedMessage.class)
                    .buildMetadata().buildSessionFactory();
        } catch (RuntimeException e) {
            StandardServiceRegistryBuilder.destroy(registry);
            throw e;
        }
        JtaPlatform platform = registry.getService(JtaPlatform.class);
        if (platform == null || platform instanceof NoJtaPlatform) {
            factory.close();
            throw new IllegalStateException("Hibernate found no JTA transaction manager on this server, and the ledger"
                    + " must write in the business transaction");
        }
        return new LedgerSessions(factory);
    }

    /** {@return the entity manager of the current JTA transaction} Fails when the thread has none. */
    public EntityManager current() {
        return factory.getCurrentSession();
    }

    @Override
    public void close() {
        factory.close();
    }
}
