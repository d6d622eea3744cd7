package dev.onceonly.internal.cdi;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.memory.InMemoryResultStore;
import dev.onceonly.internal.redis.RedisClaimStore;
import dev.onceonly.internal.result.ResultKeeper;
import dev.onceonly.internal.result.ResultSettings;
import dev.onceonly.internal.result.ResultWrites;
import dev.onceonly.internal.support.Durations;
import dev.onceonly.internal.support.LogId;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.ResultStore;
import dev.onceonly.spi.TransactionRunner;

import java.time.Clock;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The results guarded methods keep ({@code result.keep}), wired at startup for the methods found
 * then: each method's {@link ResultKeeper} on its store — the ledger for a consumer with the ledger
 * on (its result commits with the effect), else the claim store's Redis or memory — and the
 * transaction runner that writes the latter after the commit ({@link ResultWrites}). A store that
 * cannot keep results stops the start, naming the consumer's {@code result.keep}.
 */
final class ResultKeepers {

    private final Map<GuardedMethod, ResultKeeper> keepers = new ConcurrentHashMap<>();
    private final KeyDeriver keys;
    private final Function<String, String> keepProperty;
    private final boolean writesAfterCommit;

    private ResultKeepers(KeyDeriver keys, Function<String, String> keepProperty, boolean writesAfterCommit) {
        this.keys = keys;
        this.keepProperty = keepProperty;
        this.writesAfterCommit = writesAfterCommit;
    }

    /**
     * Wires the keepers of the methods that keep results.
     *
     * @param methods      the guarded methods found at deployment
     * @param global       the guard-wide settings ({@code onceonly.store})
     * @param store        the claim store in use
     * @param ledger       the ledger's result store, made on first use (only for a consumer with the ledger on)
     * @param keepProperty the property a consumer's {@code result.keep} was read from
     * @param keys         derives a duplicate's key again, to look its result up
     * @param clock        the in-memory store's time
     * @return the keepers
     * @throws InvalidConfigurationException naming a consumer's {@code result.keep} when its store cannot keep results
     */
    static ResultKeepers open(Collection<GuardedMethod> methods, OnceOnlyConfig.Global global, ClaimStore store,
                              Supplier<LedgerResults> ledger, Function<String, String> keepProperty, KeyDeriver keys, Clock clock) {
        ResultStore inLedger = null;
        ResultStore beside = null;
        boolean besideNeeded = methods.stream().anyMatch(m -> m.results() != null && !m.settings().ledger());
        ResultKeepers wired = new ResultKeepers(keys, keepProperty, besideNeeded);
        for (GuardedMethod m : methods) {
            ResultSettings s = m.results();
            if (s == null) {
                continue;
            }
            String consumer = m.settings().consumer();
            ResultStore kept;
            if (m.settings().ledger()) {
                if (inLedger == null) {
                    LedgerResults results = ledger.get();
                    results.problem().ifPresent(problem -> {
                        throw new InvalidConfigurationException(keepProperty.apply(consumer), "true", "false, or " + problem
                                + ": a table created before results were kept needs the ALTER TABLE of docs/ledger.md");
                    });
                    inLedger = results.store();
                }
                kept = inLedger;
            } else {
                if (beside == null) {
                    beside = besideTheClaims(global, store, clock, keepProperty.apply(consumer));
                }
                kept = beside;
            }
            wired.keepers.put(m, new ResultKeeper(consumer, m.returnType(), s, kept));
            LogId.ONCE0901I.log(consumer, kept.name(), s.maxBytes(), Durations.format(s.retention()));
        }
        return wired;
    }

    /** The results of consumers without the ledger: next to their claims, where the claim store can keep them. */
    private static ResultStore besideTheClaims(OnceOnlyConfig.Global global, ClaimStore store, Clock clock, String property) {
        if (store instanceof RedisClaimStore redis) {
            return redis.results();
        }
        if (global.store().equals("memory")) {
            return new InMemoryResultStore(global.memoryMaxEntries(), clock);
        }
        throw new InvalidConfigurationException(property, "true", "false, or ledger=true for this consumer: the " + global.store()
                + " claim store keeps no results (onceonly.store=redis or memory does, and the ledger does)");
    }

    /**
     * {@return the runner the guard runs calls in: {@code transactions}, writing results after the
     * commit where a consumer keeps them beside its claims}
     *
     * @param transactions the runner of the guarded calls
     */
    TransactionRunner transactions(TransactionRunner transactions) {
        return writesAfterCommit ? new ResultWrites(transactions) : transactions;
    }

    /**
     * The keeper of a method that keeps results.
     *
     * @param method a guarded method whose {@link GuardedMethod#results()} is set
     * @return its keeper
     * @throws InvalidConfigurationException for a method first seen at its first call: its store was not wired
     */
    ResultKeeper keeper(GuardedMethod method) {
        ResultKeeper keeper = keepers.get(method);
        if (keeper == null) {
            throw new InvalidConfigurationException(keepProperty.apply(method.settings().consumer()), "true",
                    "false for " + method.name() + ", which was first seen at its first call: results are kept only for the "
                            + "consumers found at deployment");
        }
        return keeper;
    }

    /**
     * {@return the key of a duplicate, derived again to look its result up}
     *
     * @param method       the guarded method
     * @param dispatch     the call's message
     * @param parameterKey its {@code @IdempotencyKey} argument, or {@code null}
     * @throws dev.onceonly.internal.engine.KeyRejectedException never for a call the guard found a duplicate
     */
    String key(GuardedMethod method, Dispatch dispatch, Object parameterKey) {
        return keys.derive(method.settings(), dispatch.message(), parameterKey).storeKey();
    }

    /**
     * The ledger's result store, and what its table lacks to keep results.
     *
     * @param store   the store
     * @param problem {@link dev.onceonly.internal.ledger.jpa.JpaResultStore#problem()}
     */
    record LedgerResults(ResultStore store, java.util.Optional<String> problem) {
    }
}
