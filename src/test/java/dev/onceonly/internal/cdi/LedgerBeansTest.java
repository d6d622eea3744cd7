package dev.onceonly.internal.cdi;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.ledger.jpa.JpaLedger;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.NonTransactionalConnections;
import dev.onceonly.testing.ScratchDatabase;
import org.hibernate.SessionFactory;
import org.junit.jupiter.api.Test;

import java.time.Clock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ledger's startup check of its datasource, on H2 with the container's transactions emulated by {@link LocalJta}. */
class LedgerBeansTest {

    /**
     * A ledger datasource whose connections do not join the JTA transaction (the demo's
     * {@code jdbc/onceonly-claims}, {@code transactional="false"}) would auto-commit the ledger row,
     * so that a failed handler's retry is acknowledged as a duplicate: it stops the start, naming
     * {@code onceonly.ledger.datasource}. The same database through connections that join passes.
     */
    @Test
    void aLedgerDatasourceThatDoesNotJoinTheTransactionStopsTheStart() throws Exception {
        try (ScratchDatabase db = ScratchDatabase.create(ScratchDatabase.Kind.H2, true);
             SessionFactory outside = NonTransactionalConnections.sessionFactory(db)) {
            LocalJta outsideJta = new LocalJta(outside);
            JpaLedger autoCommitting = new JpaLedger("oo:", db.tables().ledger(), outsideJta::entityManager, outsideJta, Clock.systemUTC());
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> LedgerBeans.checkedForTransactions(autoCommitting, "jdbc/onceonly-claims"));
            assertEquals("onceonly.ledger.datasource", e.property());
            assertTrue(e.getMessage().contains("'jdbc/onceonly-claims'") && e.getMessage().contains("transactional=\"false\"")
                    && e.getMessage().contains("duplicate"), e.getMessage());

            LocalJta jta = new LocalJta(db.sessionFactory());
            JpaLedger joining = new JpaLedger("oo:", db.tables().ledger(), jta::entityManager, jta, Clock.systemUTC());
            assertSame(joining, LedgerBeans.checkedForTransactions(joining, "jdbc/onceonly"));
        }
    }
}
