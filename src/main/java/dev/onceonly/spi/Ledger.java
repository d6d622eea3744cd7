package dev.onceonly.spi;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The authoritative second layer: a transactional table of processed message keys with a unique
 * key column. {@link #insert} runs inside the business transaction, before the business method,
 * so the row commits or rolls back together with the business writes.
 */
public interface Ledger {

    /**
     * Inserts the row for {@code key} in the current transaction and flushes it at once, so a
     * duplicate surfaces here and not at commit. On a unique violation the implementation decides,
     * in a new transaction with a fresh read, what it means. Any other failure is thrown: the
     * transaction must then roll back.
     *
     * @param key the message key
     * @param consumer the consumer name
     * @param bodyHash what a later copy under this key must match to be a duplicate: SHA-256 (hex) of
     *                 the body, or of the consumer's conflict fields; empty when bodies are not
     *                 compared ({@code conflict=ignore}). Stored with the row. The verifier's rule is
     *                 the claim store's: an empty hash on either side matches any, else equal hashes
     *                 are a {@link LedgerDecision#DUPLICATE} and different ones a
     *                 {@link LedgerDecision#CONFLICT}
     * @return {@link LedgerDecision#INSERTED}, or why the business method must not run
     */
    LedgerDecision insert(String key, String consumer, String bodyHash);

    /**
     * Inserts the rows of several messages in the current transaction, each as {@link #insert} would,
     * in one round trip where the ledger can (a JDBC batch).
     *
     * <p>Returns one answer per row, in order. When every row was inserted, each answer is
     * {@link LedgerDecision#INSERTED}. Otherwise at least one answer is a refusal ({@code DUPLICATE},
     * {@code CONFLICT} or {@code RETRY}, decided as {@link #insert} decides it), the transaction must
     * roll back (none of the rows stays), and an answer that is {@code INSERTED} or {@code null} (a
     * row not tried, or whose fate is unknown) says nothing: the caller tries those rows again in
     * another transaction. A refused row's answer may be {@code RETRY} where the ledger could not tell
     * which row was refused. The keys are distinct. Any other failure is thrown, as by {@link #insert}.
     * The default inserts one row after the other and stops at the first refusal.
     *
     * @param rows the rows, with distinct keys
     * @return one answer per row, in the order of {@code rows}
     */
    default List<LedgerDecision> insertAll(List<Row> rows) {
        List<LedgerDecision> answers = new ArrayList<>(rows.size());
        for (Row r : rows) {
            LedgerDecision d = insert(r.key(), r.consumer(), r.bodyHash());
            answers.add(d);
            if (d != LedgerDecision.INSERTED) {
                break;
            }
        }
        while (answers.size() < rows.size()) {
            answers.add(null);
        }
        return answers;
    }

    /**
     * One row of {@link #insertAll}: the arguments of {@link #insert}.
     *
     * @param key      the message key
     * @param consumer the consumer name
     * @param bodyHash what a later copy under this key must match (see {@link #insert})
     */
    record Row(String key, String consumer, String bodyHash) {
    }

    /**
     * Checks, once at startup, that the ledger can be used: its datasource answers and its table
     * exists.
     *
     * @throws RuntimeException saying what is missing
     */
    void checkReady();

    /**
     * Deletes this application's rows written before {@code olderThan}, in batches of about
     * {@code batchSize} rows, each in its own transaction. Safe to run on several instances at once.
     * Rows of other applications sharing the table (keys under another {@code onceonly.key-prefix})
     * are left to their own purge and retention.
     *
     * @param olderThan rows written before this instant are deleted
     * @param batchSize about how many rows one transaction deletes
     * @return the number of rows this call deleted
     */
    long purge(Instant olderThan, int batchSize);

    /** Outcome of {@link #insert}. */
    enum LedgerDecision {
        /** Row inserted (uncommitted): go on. */
        INSERTED,
        /** A committed row with the same body hash exists (or one of the two is empty): processed before. */
        DUPLICATE,
        /** A committed row with a different body hash exists. */
        CONFLICT,
        /**
         * The violation was seen but the verifier found no committed row (it was deleted in between,
         * e.g. by the purge): no decision is safe now, try again later. A collision with an
         * uncommitted row that then rolls back is not a RETRY: the insert waits for that
         * transaction and then succeeds ({@link #INSERTED}).
         */
        RETRY
    }
}
