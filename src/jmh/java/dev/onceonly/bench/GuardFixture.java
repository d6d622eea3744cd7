package dev.onceonly.bench;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.engine.Decision;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.GuardEngine;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.Ledger;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.Settings;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * A {@link GuardEngine} as the CDI layer builds it for one consumer with the defaults (content key,
 * 30 s lease, 24 h retention, no ledger unless asked, no transaction), and a message whose body changes on every
 * call, so each call is a fresh message: derive the key, claim, run the handler, complete.
 */
final class GuardFixture implements AutoCloseable {

    static final String CONSUMER = "orders";
    /** A ledger that takes every row: the benchmarks with the ledger on measure the claim store's share. */
    private static final Ledger INSERTING = new Ledger() {
        @Override
        public LedgerDecision insert(String key, String consumer, String bodyHash) {
            return LedgerDecision.INSERTED;
        }

        @Override
        public void checkReady() {
        }

        @Override
        public long purge(Instant olderThan, int batchSize) {
            return 0;
        }
    };

    /** The handler: does nothing, allocates nothing, so what is measured is the guard. */
    private static final TransactionRunner.Work<Boolean> HANDLER = () -> Boolean.TRUE;

    /** Runs the engine's lease renewal sweep (every 5 s with the default 30 s lease; idle here). */
    private final ScheduledThreadPoolExecutor scheduler;
    private final GuardEngine engine;
    private final ConsumerSettings settings;
    private final byte[] body;
    private final MessageView message;
    private long sequence;

    GuardFixture(ClaimStore store, int bodySize) {
        this(store, bodySize, false);
    }

    /**
     * @param ledgerOn the consumer has the ledger on, so the done mark is written after the guard
     *                 returned, off this thread; the ledger itself is a stand-in answering INSERTED
     *                 (what a real row costs is measured end to end, bench/run-load.sh), so what is
     *                 measured is the consumer thread's share of the Redis work
     */
    GuardFixture(ClaimStore store, int bodySize, boolean ledgerOn) {
        scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "onceonly-bench-watchdog");
            t.setDaemon(true);
            return t;
        });
        settings = Settings.withLedger(Settings.defaults(CONSUMER, KeyStrategy.CONTENT), ledgerOn);
        engine = new GuardEngine(store, TransactionRunner.NONE, ledgerOn ? INSERTING : null, scheduler, GuardListener.NONE,
                new KeyDeriver("oo:"));
        body = new byte[bodySize];
        for (int i = 0; i < bodySize; i++) {
            body[i] = (byte) ('a' + i % 26);
        }
        message = MessageView.of("orders", "order.placed", null, Map.of(), body);
    }

    /** Guards the next fresh message; returns what the handler returned ({@code TRUE}). */
    Boolean guardNext() throws Exception {
        long n = ++sequence;
        for (int i = 0; i < 8; i++) {
            body[i] = (byte) (n >>> (8 * i));
        }
        return engine.guard(settings, Dispatch.of(message), null, HANDLER).resultOrThrow();
    }

    /**
     * Guards {@code size} fresh messages as one batch ({@code GuardEngine.guardAll}): one claim call,
     * the handler once; returns how many were processed.
     */
    int guardBatch(int size) {
        List<Dispatch> batch = new ArrayList<>(size);
        for (int m = 0; m < size; m++) {
            long n = ++sequence;
            byte[] copy = body.clone();
            for (int i = 0; i < 8; i++) {
                copy[i] = (byte) (n >>> (8 * i));
            }
            batch.add(Dispatch.of(MessageView.of("orders", "order.placed", null, Map.of(), copy)));
        }
        int processed = 0;
        for (Decision<Boolean> d : engine.guardAll(settings, batch, positions -> Boolean.TRUE)) {
            processed += d.outcome() == Outcome.PROCESSED ? 1 : 0;
        }
        return processed;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
