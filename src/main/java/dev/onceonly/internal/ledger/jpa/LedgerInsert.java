package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.internal.support.UniqueViolation;
import dev.onceonly.spi.Ledger;
import org.hibernate.engine.spi.SharedSessionContractImplementor;
import org.hibernate.metamodel.mapping.JdbcMapping;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The ledger's insert of one row, or of several in one JDBC batch, on the connection of a session
 * joined to the caller's transaction, executed at once: a duplicate must surface here, before the
 * business method runs, and not as a failed commit after it ran. Not {@code persist} and
 * {@code flush}, because Hibernate logs every SQL exception it converts as an ERROR, and a duplicate
 * is a routine outcome its caller handles. The timestamp is bound by Hibernate's own binder for
 * {@link ProcessedMessage#processedAt()}, so it is stored exactly as the purge's queries compare it.
 */
final class LedgerInsert {

    private final String sql;
    private final Clock clock;
    /**
     * How Hibernate binds {@link ProcessedMessage#processedAt()}: looked up in the metamodel on the
     * first insert, not on every one. The sessions of one ledger come from one factory.
     */
    private volatile JdbcMapping processedAt;

    /**
     * @param table the ledger table, already validated as an SQL name
     * @param clock the time written into each row
     */
    LedgerInsert(String table, Clock clock) {
        this.sql = "insert into " + Objects.requireNonNull(table, "table")
                + " (msg_id, consumer, body_sha256, processed_at) values (?, ?, ?, ?)";
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Inserts {@code rows} in the session's transaction: one statement for one row, a JDBC batch for
     * several (one round trip where the driver batches).
     *
     * @return a unique violation, or empty when every row was inserted; any other failure is thrown
     *         (and converted and logged by Hibernate)
     */
    Optional<SQLException> insert(SharedSessionContractImplementor session, List<Ledger.Row> rows) {
        return session.doReturningWork(c -> tryInsert(c, session, rows));
    }

    private Optional<SQLException> tryInsert(Connection connection, SharedSessionContractImplementor session,
                                             List<Ledger.Row> rows) throws SQLException {
        JdbcMapping processedAt = this.processedAt;
        if (processedAt == null) {
            processedAt = session.getFactory().getMappingMetamodel().getEntityDescriptor(ProcessedMessage.class)
                    .findAttributeMapping("processedAt").getSingleJdbcMapping();
            this.processedAt = processedAt;
        }
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (Ledger.Row r : rows) {
                statement.setString(1, r.key());
                statement.setString(2, r.consumer());
                statement.setString(3, r.bodyHash());
                processedAt.getJdbcValueBinder().bind(statement, clock.instant(), 4, session);
                if (rows.size() > 1) {
                    statement.addBatch();
                }
            }
            if (rows.size() > 1) {
                statement.executeBatch();
            } else {
                statement.executeUpdate();
            }
            return Optional.empty();
        } catch (SQLException e) {
            Optional<SQLException> violation = UniqueViolation.find(e);
            if (violation.isEmpty()) {
                throw e;
            }
            return violation;
        }
    }
}
