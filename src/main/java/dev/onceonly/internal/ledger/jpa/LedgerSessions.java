package dev.onceonly.internal.ledger.jpa;

import jakarta.persistence.EntityManager;
import org.hibernate.SessionFactory;
import org.hibernate.boot.MetadataSources;
import org.hibernate.boot.model.naming.Identifier;
import org.hibernate.boot.model.naming.PhysicalNamingStrategy;
import org.hibernate.boot.model.naming.PhysicalNamingStrategyStandardImpl;
import org.hibernate.boot.registry.StandardServiceRegistry;
import org.hibernate.boot.registry.StandardServiceRegistryBuilder;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.engine.jdbc.env.spi.JdbcEnvironment;
import org.hibernate.engine.jdbc.env.spi.NameQualifierSupport;
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
     * @param dataSource  the datasource of the business data, which the ledger's table is in
     * @param ledgerTable the ledger table {@link ProcessedMessage} is mapped to ({@code onceonly.ledger.table}),
     *                    {@code name} or {@code schema.name}, already validated as an SQL name
     * @return the sessions, to close when the application stops
     * @throws IllegalStateException when Hibernate finds no JTA transaction manager on this server
     */
    public static LedgerSessions on(DataSource dataSource, String ledgerTable) {
        StandardServiceRegistry registry = new StandardServiceRegistryBuilder()
                .applySetting(AvailableSettings.DATASOURCE, dataSource)
                .applySetting(AvailableSettings.TRANSACTION_COORDINATOR_STRATEGY, "jta")
                .applySetting(AvailableSettings.CURRENT_SESSION_CONTEXT_CLASS, "jta")
                // The shipped DDL owns the schema (LedgerSchema); Hibernate never changes it.
                .applySetting(AvailableSettings.HBM2DDL_AUTO, "none")
                .build();
        SessionFactory factory;
        try {
            factory = new MetadataSources(registry).addAnnotatedClass(ProcessedMessage.class).getMetadataBuilder()
                    .applyPhysicalNamingStrategy(naming(ledgerTable)).build().buildSessionFactory();
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

    /**
     * The naming that maps {@link ProcessedMessage} to {@code ledgerTable}, for any Hibernate
     * bootstrap of the entity.
     *
     * @param ledgerTable the ledger table, {@code name} or {@code schema.name}, already validated as an SQL name
     * @return the naming strategy
     */
    public static PhysicalNamingStrategy naming(String ledgerTable) {
        return new LedgerTableName(ledgerTable);
    }

    /**
     * Maps {@link ProcessedMessage}'s table to the configured one, and a qualified name's schema to
     * what the dialect qualifies tables with: the schema (PostgreSQL, H2) or the catalog (MariaDB,
     * whose databases are JDBC catalogs). The session factory maps nothing else.
     */
    private static final class LedgerTableName extends PhysicalNamingStrategyStandardImpl {

        private final Identifier table;
        /** The schema the name is qualified with, or {@code null}. */
        private final Identifier schema;

        LedgerTableName(String table) {
            int dot = table.indexOf('.');
            this.table = Identifier.toIdentifier(table.substring(dot + 1));
            this.schema = dot < 0 ? null : Identifier.toIdentifier(table.substring(0, dot));
        }

        @Override
        public Identifier toPhysicalTableName(Identifier logicalName, JdbcEnvironment environment) {
            return logicalName.getText().equals(LedgerSchema.Part.LEDGER.shipped()) ? table : logicalName;
        }

        @Override
        public Identifier toPhysicalCatalogName(Identifier logicalName, JdbcEnvironment environment) {
            return schema != null && environment.getNameQualifierSupport() == NameQualifierSupport.CATALOG ? schema : logicalName;
        }

        @Override
        public Identifier toPhysicalSchemaName(Identifier logicalName, JdbcEnvironment environment) {
            return schema != null && environment.getNameQualifierSupport().supportsSchemas() ? schema : logicalName;
        }
    }
}
