package dev.onceonly.testing;

import dev.onceonly.internal.ledger.jpa.LedgerSessions;
import dev.onceonly.internal.ledger.jpa.ProcessedMessage;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.AvailableSettings;
import org.hibernate.cfg.Configuration;

import javax.sql.DataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;

/**
 * Connections that do not join the transaction they are used in, like those of a Liberty
 * {@code <dataSource transactional="false">} inside a JTA transaction: each statement commits at
 * once (auto-commit), and the transaction's commit or rollback does nothing to them. Here they ignore
 * {@code setAutoCommit(false)}, {@code commit()} and {@code rollback()}, so that the resource-local
 * transactions {@link LocalJta} emulates JTA with leave them as a server leaves connections it never
 * enlisted.
 */
public final class NonTransactionalConnections {

    private NonTransactionalConnections() {
    }

    /** Hibernate, mapping {@link ProcessedMessage}, on connections of {@code db} that do not join transactions. */
    public static SessionFactory sessionFactory(ScratchDatabase db) {
        DataSource plain = db.dataSource();
        DataSource outside = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (p, method, args) -> switch (method.getName()) {
                    case "getConnection" -> autoCommitting(plain.getConnection());
                    case "toString" -> "connections outside transactions to " + plain;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        Configuration cfg = new Configuration().addAnnotatedClass(ProcessedMessage.class)
                .setPhysicalNamingStrategy(LedgerSessions.naming(db.tables().ledger()));
        cfg.getProperties().put(AvailableSettings.DATASOURCE, outside);
        return cfg.buildSessionFactory();
    }

    private static Connection autoCommitting(Connection c) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (p, method, args) -> switch (method.getName()) {
                    case "setAutoCommit", "commit", "rollback" -> null;
                    case "getAutoCommit" -> true;
                    default -> {
                        try {
                            yield method.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                });
    }
}
