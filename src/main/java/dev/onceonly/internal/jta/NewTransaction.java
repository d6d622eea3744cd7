package dev.onceonly.internal.jta;

import java.util.function.Supplier;

/**
 * Runs work in a transaction of its own, with {@code REQUIRES_NEW} semantics: a transaction of the
 * caller is suspended meanwhile and resumed afterwards, whatever its state. The ledger needs this
 * to read after a unique violation: PostgreSQL refuses every further statement in the transaction
 * that saw the violation, and MariaDB under REPEATABLE READ would answer from that transaction's
 * old snapshot.
 */
public interface NewTransaction {

    /**
     * Runs {@code work} in a new transaction, committed when it returns and rolled back when it throws.
     *
     * @param <T> what {@code work} returns
     * @param work the reads and writes of the new transaction
     * @return what {@code work} returned
     */
    <T> T call(Supplier<T> work);
}
