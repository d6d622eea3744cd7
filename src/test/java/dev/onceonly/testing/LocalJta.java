package dev.onceonly.testing;

import dev.onceonly.internal.jta.NewTransaction;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.TransactionRequiredException;
import jakarta.transaction.RollbackException;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.UserTransaction;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * Container-managed JPA transactions, emulated in the test JVM, for code written against a
 * transaction-scoped {@link EntityManager} (the {@code JpaLedger}) when no application server runs.
 *
 * <ul>
 *   <li>A transaction is an {@link EntityManager} of its own with a resource-local transaction on its
 *       own connection. Each thread has a stack of them; the top one is the thread's current
 *       transaction.</li>
 *   <li>{@link #entityManager()} is what the container would inject: a {@link Proxy} that delegates
 *       every call to the current transaction's entity manager of the calling thread, and throws
 *       {@link TransactionRequiredException} when the thread has none.</li>
 *   <li>{@link UserTransaction} and {@link TransactionSynchronizationRegistry} act on the current
 *       transaction, so the production {@code JtaTransactionRunner} runs on this class unchanged.
 *       {@link #begin} refuses to nest, as JTA does.</li>
 *   <li>{@link NewTransaction#call} is {@code REQUIRES_NEW}: it pushes a new transaction (the caller's
 *       is suspended: no longer current, its connection and locks kept), commits or rolls it back,
 *       and pops it, which resumes the caller's.</li>
 *   <li>A JPA failure that marks the entity manager's transaction rollback-only (as Hibernate does
 *       on a constraint violation) shows in {@link #getStatus}, as the JTA transaction would.</li>
 * </ul>
 * Not emulated: timeouts, XA, a transaction spanning threads.
 */
public final class LocalJta implements UserTransaction, TransactionSynchronizationRegistry, NewTransaction {

    private final EntityManagerFactory emf;
    private final ThreadLocal<Deque<Tx>> stacks = ThreadLocal.withInitial(ArrayDeque::new);
    private final EntityManager proxy;

    public LocalJta(EntityManagerFactory emf) {
        this.emf = emf;
        this.proxy = (EntityManager) Proxy.newProxyInstance(EntityManager.class.getClassLoader(),
                new Class<?>[] {EntityManager.class}, (p, method, args) -> {
                    if (method.getDeclaringClass() == Object.class) {
                        return switch (method.getName()) {
                            case "equals" -> p == args[0];
                            case "hashCode" -> System.identityHashCode(p);
                            default -> "transaction-scoped EntityManager of " + emf;
                        };
                    }
                    Tx tx = stacks.get().peek();
                    if (tx == null) {
                        throw new TransactionRequiredException("no transaction on this thread for EntityManager." + method.getName());
                    }
                    try {
                        return method.invoke(tx.em, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** The transaction-scoped entity manager, as a container injects it. */
    public EntityManager entityManager() {
        return proxy;
    }

    /** Runs {@code work} in a new top-level transaction: committed when it returns, rolled back when it throws. */
    public <T> T inTransaction(Callable<T> work) throws Exception {
        begin();
        T result;
        try {
            result = work.call();
        } catch (Exception | Error e) {
            rollback();
            throw e;
        }
        commit();
        return result;
    }

    // ---- NewTransaction ----

    @Override
    public <T> T call(Supplier<T> work) {
        Tx tx = push();
        T result;
        try {
            result = work.get();
        } catch (RuntimeException | Error e) {
            end(tx, false);
            throw e;
        }
        try {
            commit(tx);
        } catch (RollbackException e) {
            throw new IllegalStateException("new transaction rolled back at commit", e);
        }
        return result;
    }

    // ---- UserTransaction ----

    @Override
    public void begin() {
        if (!stacks.get().isEmpty()) {
            throw new IllegalStateException("a transaction is already active on this thread (no nesting in JTA)");
        }
        push();
    }

    @Override
    public void commit() throws RollbackException {
        commit(current());
    }

    @Override
    public void rollback() {
        end(current(), false);
    }

    @Override
    public void setRollbackOnly() {
        current().markedRollbackOnly = true;
    }

    @Override
    public int getStatus() {
        Tx tx = stacks.get().peek();
        if (tx == null) {
            return Status.STATUS_NO_TRANSACTION;
        }
        return tx.rollbackOnly() ? Status.STATUS_MARKED_ROLLBACK : Status.STATUS_ACTIVE;
    }

    @Override
    public void setTransactionTimeout(int seconds) {
    }

    // ---- TransactionSynchronizationRegistry ----

    @Override
    public Object getTransactionKey() {
        return stacks.get().peek();
    }

    @Override
    public void putResource(Object key, Object value) {
        current().resources.put(key, value);
    }

    @Override
    public Object getResource(Object key) {
        return current().resources.get(key);
    }

    @Override
    public void registerInterposedSynchronization(Synchronization sync) {
        current().synchronizations.add(sync);
    }

    @Override
    public int getTransactionStatus() {
        return getStatus();
    }

    @Override
    public boolean getRollbackOnly() {
        return current().rollbackOnly();
    }

    // ---- the transactions ----

    /** One transaction: its entity manager, and what JTA keeps with a transaction. */
    private static final class Tx {
        final EntityManager em;
        final List<Synchronization> synchronizations = new ArrayList<>();
        final Map<Object, Object> resources = new HashMap<>();
        boolean markedRollbackOnly;

        Tx(EntityManager em) {
            this.em = em;
        }

        boolean rollbackOnly() {
            return markedRollbackOnly || em.getTransaction().getRollbackOnly();
        }
    }

    private Tx current() {
        Tx tx = stacks.get().peek();
        if (tx == null) {
            throw new IllegalStateException("no transaction on this thread");
        }
        return tx;
    }

    private Tx push() {
        EntityManager em = emf.createEntityManager();
        em.getTransaction().begin();
        Tx tx = new Tx(em);
        stacks.get().push(tx);
        return tx;
    }

    private void commit(Tx tx) throws RollbackException {
        if (tx.rollbackOnly()) {
            end(tx, false);
            throw new RollbackException("transaction was marked rollback-only");
        }
        RuntimeException failure = null;
        try {
            for (Synchronization s : tx.synchronizations) {
                s.beforeCompletion();
            }
            // As JTA: a synchronization that marked it rollback-only in beforeCompletion (the guard's
            // check before the commit) makes the commit roll back.
            if (tx.rollbackOnly()) {
                end(tx, false);
                throw new RollbackException("transaction was marked rollback-only before completion");
            }
            tx.em.getTransaction().commit();
        } catch (RuntimeException e) {
            failure = e;
        }
        if (failure != null) {
            end(tx, false);
            RollbackException rolledBack = new RollbackException("commit failed: " + failure);
            rolledBack.initCause(failure);
            throw rolledBack;
        }
        end(tx, true);
    }

    /** Rolls back unless {@code committed}, closes, pops (resuming the suspended transaction) and tells the synchronizations. */
    private void end(Tx tx, boolean committed) {
        Deque<Tx> stack = stacks.get();
        if (stack.peek() != tx) {
            throw new IllegalStateException("not the current transaction");
        }
        try {
            if (!committed && tx.em.getTransaction().isActive()) {
                tx.em.getTransaction().rollback();
            }
        } finally {
            tx.em.close();
            stack.pop();
            int status = committed ? Status.STATUS_COMMITTED : Status.STATUS_ROLLEDBACK;
            for (Synchronization s : tx.synchronizations) {
                s.afterCompletion(status);
            }
        }
    }
}
