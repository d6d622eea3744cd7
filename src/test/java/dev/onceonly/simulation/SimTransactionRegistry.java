package dev.onceonly.simulation;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

/**
 * The server's {@link TransactionSynchronizationRegistry} over {@link SimDatabase}'s transactions, so
 * that the real {@code JtaOutbox} runs unchanged: the current transaction is the innermost open one
 * (the simulation's one thread runs one call at a time), resources are kept with it, and an
 * interposed synchronization is told, after it ended, whether it committed.
 *
 * <p>{@code beforeCompletion} is not called: the outbox does nothing there, and the engine's check
 * before the commit is the {@code TransactionRunner}'s own. Rollback-only marking is not offered
 * (nothing the simulation runs asks for it: a call would fail the run).
 */
final class SimTransactionRegistry implements TransactionSynchronizationRegistry {

    private final SimDatabase db;

    SimTransactionRegistry(SimDatabase db) {
        this.db = db;
    }

    @Override
    public Object getTransactionKey() {
        return db.active() ? db.current() : null;
    }

    @Override
    public void putResource(Object key, Object value) {
        db.current().resources.put(key, value);
    }

    @Override
    public Object getResource(Object key) {
        return db.current().resources.get(key);
    }

    @Override
    public void registerInterposedSynchronization(Synchronization sync) {
        db.current().completions.add(committed -> sync.afterCompletion(committed ? Status.STATUS_COMMITTED : Status.STATUS_ROLLEDBACK));
    }

    @Override
    public int getTransactionStatus() {
        return db.active() ? Status.STATUS_ACTIVE : Status.STATUS_NO_TRANSACTION;
    }

    @Override
    public void setRollbackOnly() {
        throw new UnsupportedOperationException("the simulated registry does not mark transactions rollback-only");
    }

    @Override
    public boolean getRollbackOnly() {
        throw new UnsupportedOperationException("the simulated registry does not mark transactions rollback-only");
    }
}
