package dev.onceonly.internal.support;

import java.sql.SQLException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Optional;
import java.util.Set;

/**
 * Recognises a unique-key violation by the database's codes, never by message text (which is
 * translated and changes between driver versions).
 *
 * <ul>
 *   <li>SQLState {@code 23505} (unique violation): PostgreSQL, H2, Derby;</li>
 *   <li>vendor code {@code 1062} (ER_DUP_ENTRY) with SQLState {@code 23000}: MySQL, MariaDB. SQLState
 *       {@code 23000} alone is any integrity violation there (a NOT NULL or a foreign key too), so it
 *       is not enough.</li>
 * </ul>
 */
public final class UniqueViolation {

    static final String SQLSTATE_UNIQUE = "23505";
    static final String SQLSTATE_INTEGRITY = "23000";
    static final int MYSQL_DUPLICATE_ENTRY = 1062;
    /** Bound on each walk: a chain that long is broken (or cyclic), not informative. */
    private static final int MAX_CHAIN = 64;

    private UniqueViolation() {
    }

    /**
     * Walks the cause chain of {@code failure} (and each {@link SQLException}'s chain of next
     * exceptions, where batching drivers put the real error) for a unique violation.
     *
     * @param failure what the insert threw
     * @return the driver's exception that reports the violation, or empty when there is none
     */
    public static Optional<SQLException> find(Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t) && seen.size() <= MAX_CHAIN; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                int walked = 0;
                for (SQLException s = sql; s != null && walked++ < MAX_CHAIN; s = s.getNextException()) {
                    if (isUniqueViolation(s)) {
                        return Optional.of(s);
                    }
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The cause chain as class names, with SQLState and vendor code where there are some, e.g.
     * {@code ConstraintViolationException > PSQLException[23505/0]}. No messages: drivers put
     * the offending values in them.
     *
     * @param failure what the insert threw
     * @return the chain, for logs
     */
    public static String describe(Throwable failure) {
        StringBuilder chain = new StringBuilder();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t) && seen.size() <= MAX_CHAIN; t = t.getCause()) {
            if (!chain.isEmpty()) {
                chain.append(" > ");
            }
            chain.append(t.getClass().getSimpleName());
            if (t instanceof SQLException sql) {
                chain.append('[').append(sql.getSQLState()).append('/').append(sql.getErrorCode()).append(']');
            }
        }
        return chain.toString();
    }

    static boolean isUniqueViolation(SQLException e) {
        String state = e.getSQLState();
        return SQLSTATE_UNIQUE.equals(state)
                || e.getErrorCode() == MYSQL_DUPLICATE_ENTRY && SQLSTATE_INTEGRITY.equals(state);
    }
}
