package dev.onceonly.simulation;

import dev.onceonly.contract.OutboxStoreContract;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.outbox.OutboxStore;
import dev.onceonly.spi.TransactionRunner;
import org.junit.jupiter.api.BeforeEach;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Supplier;

/** The {@link OutboxStore} contract on the simulation's table ({@link SimOutbox}), as {@code JpaOutboxStore} passes it. */
class SimOutboxStoreContractTest extends OutboxStoreContract {

    private TransactionRunner transactions;
    private OutboxStore store;

    @BeforeEach
    void newTable() {
        SimLoop loop = new SimLoop(1, new Trace(Set.of()));
        SimDatabase db = new SimDatabase(loop, SimDatabase.Faults.NONE, (id, why) -> { });
        SimLoop.Owner owner = new SimLoop.Owner("contract");
        SimStore claims = new SimStore(() -> new InMemoryClaimStore(100, Clock.systemUTC()), loop, owner,
                SimStore.Faults.NONE, new LinkedHashSet<>(), (keys, why) -> { });
        transactions = db.transactions(owner, () -> { }, claims);
        store = new SimOutbox(db, loop).store(owner, transactions, 0);
    }

    @Override
    protected OutboxStore store() {
        return store;
    }

    @Override
    protected <T> T inNewTransaction(Supplier<T> work) {
        try {
            return transactions.run(work::get, committed -> { });
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
