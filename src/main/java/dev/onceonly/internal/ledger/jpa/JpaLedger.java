package dev.onceonly.internal.ledger.jpa;

import dev.onceonly.internal.jta.NewTransaction;
import dev.onceonly.internal.support.LogId;
import dev.onceonly.spi.Ledger;
import dev.onceonly.internal.support.UniqueViolation;
import jakarta.persistence.EntityManager;
import org.hibernate.engine.spi.SharedSessionContractImplementor;

import java.security.SecureRandom;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The ledger on JPA: {@link ProcessedMessage} rows in the business transaction's database.
 *
 * <p>{@code entityManagers} gives the entity manager of the calling thread's current transaction
 * (such as {@link LedgerSessions#current}): inside the caller's JTA transaction it writes in that
 * transaction; inside {@link NewTransaction#call} it reads in the new one. It must work on the same
 * datasource as the business data, so that the ledger row and the business writes commit together.
 */
public final class JpaLedger implements Ledger {

    /** The separator and the 22-character base64url digest that end every key after its consumer ({@code MessageKey}). */
    private static final int SEPARATOR_AND_DIGEST = 1 + 22;
    /**
     * The rows of this application: keys {@code <prefix><consumer>:<digest>} of its own prefix. The
     * length condition makes it exact where one application's prefix begins with another's
     * ({@code oo:} and {@code oo:orders:}): it holds for a row of the other only if both prefixes have
     * the same length, and then they are equal. Lengths are the database's, in characters.
     */
    private static final String OWN_ROWS = " and substring(p.msgId, 1, :prefixLength) = :prefix"
            + " and length(p.msgId) - length(p.consumer) = :prefixLength + " + SEPARATOR_AND_DIGEST;
    /** The consumer of the startup check's rows ({@link #transactionProblem}): a valid consumer name no handler is likely to have. */
    static final String CHECK_CONSUMER = "onceonly.startup-check";
    private static final SecureRandom CHECK_KEYS = new SecureRandom();

    private final String keyPrefix;
    /** The rows' insert, into the table {@link ProcessedMessage} is mapped to (its JPQL names the entity). */
    private final LedgerInsert insert;
    /** {@link #keyPrefix}'s length in characters, as the database counts them (code points). */
    private final int keyPrefixLength;
    private final Supplier<EntityManager> entityManagers;
    private final NewTransaction newTransaction;

    /**
     * A ledger writing through the entity manager of each call's transaction.
     *
     * @param keyPrefix      the application's {@code onceonly.key-prefix}, which every key it inserts
     *                       starts with
     * @param table          the ledger table, the one the entity managers map {@link ProcessedMessage} to
     *                       ({@code onceonly.ledger.table}), already validated as an SQL name
     * @param entityManagers the entity manager of the calling thread's current transaction; its
     *                       database is the business data's
     * @param newTransaction runs what must not share the caller's transaction: the verifier's read
     *                       after a unique violation, the readiness check and each purge batch
     * @param clock          the time written into each row
     */
    public JpaLedger(String keyPrefix, String table, Supplier<EntityManager> entityManagers, NewTransaction newTransaction,
                     Clock clock) {
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.insert = new LedgerInsert(table, clock);
        this.keyPrefixLength = keyPrefix.codePointCount(0, keyPrefix.length());
        this.entityManagers = Objects.requireNonNull(entityManagers, "entityManagers");
        this.newTransaction = Objects.requireNonNull(newTransaction, "newTransaction");
    }

    @Override
    public LedgerDecision insert(String key, String consumer, String bodyHash) {
        SharedSessionContractImplementor session = entityManagers.get().unwrap(SharedSessionContractImplementor.class);
        Optional<SQLException> violation = insert.insert(session, List.of(new Row(key, consumer, bodyHash)));
        if (violation.isEmpty()) {
            return LedgerDecision.INSERTED;
        }
        // The transaction cannot commit now (PostgreSQL has aborted it already): say so, as Hibernate
        // does for a failure it converts itself.
        session.markForRollbackOnly();
        LedgerDecision decision = verify(key, bodyHash);
        LogId.ONCE0402I.log(consumer, key, UniqueViolation.describe(violation.get()), decision);
        return decision;
    }

    /**
     * All rows in one JDBC batch. After a unique violation the transaction cannot commit, and a batch
     * does not say on every driver which row collided: every row's key is looked up in one read of a
     * new transaction (as {@link #verify} does for one), a row found committed is refused as it
     * would be alone, the others are left undecided ({@code null}); when none is found, the row
     * collided with was purged meanwhile, and every row answers {@code RETRY}.
     */
    @Override
    public List<LedgerDecision> insertAll(List<Row> rows) {
        if (rows.size() < 2) {
            return rows.isEmpty() ? List.of() : List.of(insert(rows.get(0).key(), rows.get(0).consumer(), rows.get(0).bodyHash()));
        }
        SharedSessionContractImplementor session = entityManagers.get().unwrap(SharedSessionContractImplementor.class);
        Optional<SQLException> violation = insert.insert(session, rows);
        if (violation.isEmpty()) {
            return Collections.nCopies(rows.size(), LedgerDecision.INSERTED);
        }
        session.markForRollbackOnly();
        List<String> keys = rows.stream().map(Row::key).toList();
        Map<String, String> stored = new HashMap<>();
        newTransaction.call(() -> entityManagers.get()
                .createQuery("select p.msgId, p.bodySha256 from ProcessedMessage p where p.msgId in :keys", Object[].class)
                .setParameter("keys", keys)
                .getResultList()).forEach(r -> stored.put((String) r[0], (String) r[1]));
        List<LedgerDecision> answers = new ArrayList<>(rows.size());
        for (Row r : rows) {
            String hash = stored.get(r.key());
            LedgerDecision d = stored.isEmpty() ? LedgerDecision.RETRY : hash == null ? null : compared(r.bodyHash(), hash);
            answers.add(d);
            if (d != null) {
                LogId.ONCE0402I.log(r.consumer(), r.key(), UniqueViolation.describe(violation.get()), d);
            }
        }
        return answers;
    }

    /**
     * The duplicate-key verifier: is there a committed row for the key, and with which body? The read
     * runs in a new transaction, because the current one cannot be trusted after the violation:
     * PostgreSQL has aborted it, and under MariaDB's REPEATABLE READ it may read an old snapshot that
     * does not show the row the violation was about.
     */
    LedgerDecision verify(String key, String bodyHash) {
        List<String> stored = newTransaction.call(() -> entityManagers.get()
                .createQuery("select p.bodySha256 from ProcessedMessage p where p.msgId = :key", String.class)
                .setParameter("key", key)
                .getResultList());
        if (stored.isEmpty()) {
            // The row we collided with was not committed after all (its transaction rolled back, or
            // the purge removed it): no decision is safe now, the message must come back later.
            return LedgerDecision.RETRY;
        }
        // An empty hash was written, or is given, by a consumer that compares no bodies (conflict=ignore):
        // the same rule as the engine's for the claim's fingerprint (MessageKey.matches), so both layers agree.
        return compared(bodyHash, stored.get(0));
    }

    /** A copy with {@code bodyHash} of the committed row with {@code stored}: a duplicate unless both are set and differ. */
    private static LedgerDecision compared(String bodyHash, String stored) {
        return bodyHash.isEmpty() || stored.isEmpty() || stored.equals(bodyHash) ? LedgerDecision.DUPLICATE : LedgerDecision.CONFLICT;
    }

    @Override
    public void checkReady() {
        newTransaction.call(() -> entityManagers.get()
                .createQuery("select p.msgId from ProcessedMessage p where p.msgId = ''", String.class)
                .setMaxResults(1)
                .getResultList());
    }

    /**
     * Checks, once at startup, that the ledger's writes belong to the transaction they are made in:
     * a row written in a transaction that rolls back must be gone, one written in a transaction that
     * commits must be there. A datasource whose connections do not join the JTA transaction (Liberty's
     * {@code transactional="false"}) fails the first, because each statement commits at once: a failed
     * handler's row would stay, and its retry would be acknowledged as a duplicate. The check looks at
     * the outcome rather than asking the connection (its auto-commit flag, its enlistment), which
     * servers and drivers answer differently. Four short transactions, nothing per message; the two
     * rows are keys of this application under {@link #CHECK_CONSUMER}, deleted at the end (and purged
     * with the rest, should that delete fail).
     *
     * @return why the ledger's writes do not follow their transaction, or empty when they do
     * @throws RuntimeException when the datasource or the table cannot be used at all
     */
    public Optional<String> transactionProblem() {
        String rolledBack = checkKey();
        String committed = checkKey();
        try {
            newTransaction.call(() -> {
                insertCheckRow(rolledBack);
                throw new CheckRollback();
            });
        } catch (CheckRollback expected) {
            // the transaction rolled back, as intended
        }
        newTransaction.call(() -> insertCheckRow(committed));
        List<String> keys = List.of(rolledBack, committed);
        List<String> found = newTransaction.call(() -> entityManagers.get()
                .createQuery("select p.msgId from ProcessedMessage p where p.msgId in :keys", String.class)
                .setParameter("keys", keys)
                .getResultList());
        newTransaction.call(() -> entityManagers.get()
                .createQuery("delete from ProcessedMessage p where p.msgId in :keys")
                .setParameter("keys", keys)
                .executeUpdate());
        if (found.contains(rolledBack)) {
            return Optional.of("a ledger row written in a transaction that then rolled back stayed in the table (it"
                    + " committed at once), so a failed handler's retry would be acknowledged as a duplicate");
        }
        if (!found.contains(committed)) {
            return Optional.of("a ledger row written in a transaction that then committed is not in the table, so the"
                    + " ledger would keep no row");
        }
        return Optional.empty();
    }

    /** A new key of the startup check, shaped like the engine's so that this application's purge covers it. */
    private String checkKey() {
        byte[] digest = new byte[16];
        CHECK_KEYS.nextBytes(digest);
        return keyPrefix + CHECK_CONSUMER + ':' + Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
    }

    /** Inserts a row of the startup check through the current transaction's session, as {@link #insert} does. */
    private Void insertCheckRow(String key) {
        SharedSessionContractImplementor session = entityManagers.get().unwrap(SharedSessionContractImplementor.class);
        insert.insert(session, List.of(new Row(key, CHECK_CONSUMER, ""))).ifPresent(violation -> {
            throw new IllegalStateException("a random startup check key is in the ledger already", violation);
        });
        return null;
    }

    /** Leaves the startup check's first transaction by exception, so that it rolls back. */
    private static final class CheckRollback extends RuntimeException {
        CheckRollback() {
            super("rolls back the ledger's startup check", null, false, false);
        }
    }

    @Override
    public long purge(Instant olderThan, int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
        }
        long total = 0;
        int deleted;
        do {
            deleted = newTransaction.call(() -> deleteBatch(olderThan, batchSize));
            total += deleted;
        } while (deleted >= batchSize); // fewer than a batch: nothing older is left (or another instance took it)
        return total;
    }

    /**
     * Deletes this application's oldest rows up to the {@code batchSize}-th one, by time: a range
     * delete on the {@code processed_at} index, limited to the keys of this application's prefix
     * ({@link #OWN_ROWS}), so that applications sharing the database each purge their own rows with
     * their own retention. Instances purging at the same time delete overlapping ranges in the same
     * index order; the later one waits for the earlier one's row locks and then finds the rows gone,
     * which is not an error.
     */
    private int deleteBatch(Instant olderThan, int batchSize) {
        EntityManager em = entityManagers.get();
        List<Instant> last = em.createQuery("select p.processedAt from ProcessedMessage p"
                        + " where p.processedAt < :olderThan" + OWN_ROWS + " order by p.processedAt", Instant.class)
                .setParameter("olderThan", olderThan)
                .setParameter("prefix", keyPrefix)
                .setParameter("prefixLength", keyPrefixLength)
                .setFirstResult(batchSize - 1)
                .setMaxResults(1)
                .getResultList();
        if (last.isEmpty()) {
            return em.createQuery("delete from ProcessedMessage p where p.processedAt < :olderThan" + OWN_ROWS)
                    .setParameter("olderThan", olderThan)
                    .setParameter("prefix", keyPrefix)
                    .setParameter("prefixLength", keyPrefixLength)
                    .executeUpdate();
        }
        return em.createQuery("delete from ProcessedMessage p where p.processedAt <= :last" + OWN_ROWS)
                .setParameter("last", last.get(0))
                .setParameter("prefix", keyPrefix)
                .setParameter("prefixLength", keyPrefixLength)
                .executeUpdate();
    }
}
