package dev.onceonly.contract;

import dev.onceonly.spi.ResultStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The {@link ResultStore} contract, once, for every implementation. Subclasses provide the store,
 * a way to let time pass, and the guarded call its puts run in: for a transactional store a business
 * transaction that inserts the key's ledger row first.
 *
 * <h2>The contract checked</h2>
 * <ul>
 *   <li>What a committed call put under a key is what {@link ResultStore#get} answers for it,
 *       text exactly as put (large, and beyond ASCII); a later put overwrites it.</li>
 *   <li>A key nobody put under has none; a key's result is never another key's.</li>
 *   <li>Once the put's retention has passed, {@code get} answers none; before, it answers it.</li>
 *   <li>Transactional stores: a put of a call whose transaction rolled back is not kept; any other
 *       store keeps a put as made, so its writer puts only after a commit.</li>
 * </ul>
 * Keys are random per test, so suites can share a Redis or a database.
 */
public abstract class ResultStoreContract<S extends ResultStore> {

    protected S store;

    /** The store under test. */
    protected abstract S newStore() throws Exception;

    /** Lets {@code d} pass on the store's clock (a test clock moved, or real time slept). */
    protected abstract void elapse(Duration d) throws Exception;

    /**
     * Runs {@code puts}, the result writes of one guarded call of {@code key}: for a transactional
     * store inside a new business transaction that first inserts the ledger row of {@code key}, then
     * commits ({@code commit}) or rolls back; for any other, as they are.
     */
    protected abstract void call(String key, boolean commit, Runnable puts) throws Exception;

    /** A key as the guard makes them: {@code <prefix><consumer>:<22-character digest>}, new per call. */
    protected String key() {
        String digest = UUID.randomUUID().toString().replace("-", "").substring(0, 22);
        return "oo:results-" + getClass().getSimpleName().toLowerCase() + ":" + digest;
    }

    @BeforeEach
    void openStore() throws Exception {
        store = newStore();
    }

    @Test
    void whatACommittedCallPutIsGivenBack() throws Exception {
        String key = key();
        call(key, true, () -> store.put(key, "{\"receipt\":\"r-1\",\"amount\":10}", Duration.ofHours(1)));
        assertEquals(Optional.of("{\"receipt\":\"r-1\",\"amount\":10}"), store.get(key));
    }

    @Test
    void aKeyNobodyPutUnderHasNone() {
        assertEquals(Optional.empty(), store.get(key()));
    }

    @Test
    void eachKeyHasItsOwn() throws Exception {
        String a = key();
        String b = key();
        call(a, true, () -> store.put(a, "\"a\"", Duration.ofHours(1)));
        call(b, true, () -> store.put(b, "\"b\"", Duration.ofHours(1)));
        assertEquals(Optional.of("\"a\""), store.get(a));
        assertEquals(Optional.of("\"b\""), store.get(b));
    }

    @Test
    void aLaterPutOverwrites() throws Exception {
        String key = key();
        call(key, true, () -> {
            store.put(key, "1", Duration.ofHours(1));
            store.put(key, "2", Duration.ofHours(1));
        });
        assertEquals(Optional.of("2"), store.get(key));
    }

    /** 200 KB of JSON, with characters of two, three and four UTF-8 bytes: kept as put. */
    @Test
    void aLargeResultBeyondAsciiIsKeptAsPut() throws Exception {
        String key = key();
        String json = "[\"" + "é€𝄞x".repeat(40_000) + "\"]";
        call(key, true, () -> store.put(key, json, Duration.ofHours(1)));
        assertEquals(Optional.of(json), store.get(key));
    }

    @Test
    void aResultIsGivenUntilItsRetentionHasPassed() throws Exception {
        String key = key();
        Duration retention = Duration.ofSeconds(2);
        call(key, true, () -> store.put(key, "\"kept\"", retention));
        elapse(Duration.ofMillis(500));
        assertEquals(Optional.of("\"kept\""), store.get(key), "within its retention");
        elapse(Duration.ofMillis(1_700));
        assertEquals(Optional.empty(), store.get(key), "after its retention");
    }

    /**
     * A transactional store's put follows the call's transaction: rolled back, nothing is kept. Any
     * other store keeps a put as made, whatever happens to the transaction around it: that is why
     * {@code ResultWrites} puts into such a store only after the commit.
     */
    @Test
    void aPutOfARolledBackCallIsKeptOnlyByANonTransactionalStore() throws Exception {
        String key = key();
        call(key, false, () -> store.put(key, "\"rolled back\"", Duration.ofHours(1)));
        assertEquals(store.transactional() ? Optional.empty() : Optional.of("\"rolled back\""), store.get(key),
                store.transactional() ? "rolled back with the call's transaction" : "kept as put: the store is not transactional");
    }
}
