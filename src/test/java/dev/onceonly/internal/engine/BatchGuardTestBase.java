package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.jta.JtaTransactionRunner;
import dev.onceonly.internal.ledger.jpa.JpaLedger;
import dev.onceonly.internal.ledger.jpa.LedgerSchema;
import dev.onceonly.internal.ledger.jpa.ProcessedMessage;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.Dispatch;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.spi.Ledger;
import dev.onceonly.testing.LocalJta;
import dev.onceonly.testing.RecordingDispatch;
import dev.onceonly.testing.Settings;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the tests of a batch's guard share ({@link BatchGuardTest}, {@link BatchFailureTest}): real
 * transactions ({@link LocalJta} on H2, through the production {@link JtaTransactionRunner}), the
 * real {@link JpaLedger}, the in-memory claim store counting its round trips; a handler writing one
 * business row per message, and what each test looks at afterwards: the claims, the ledger rows,
 * the business rows (each message's effect exactly once).
 */
abstract class BatchGuardTestBase extends LedgerOnEngineTest {

    final List<GuardEvent> outcomes = new CopyOnWriteArrayList<>();
    final AtomicInteger leasesLost = new AtomicInteger();
    final GuardListener listener = new GuardListener() {
        @Override
        public void onOutcome(GuardEvent e) {
            outcomes.add(e);
        }

        @Override
        public void onLeaseLost(String c) {
            leasesLost.incrementAndGet();
        }
    };
    final CountingStore store = new CountingStore(new InMemoryClaimStore(10_000, clock));
    final JpaLedger ledger = new JpaLedger("oo:", LedgerSchema.Part.LEDGER.shipped(), () -> em, jta, clock);
    final String consumer = "batch-" + UUID.randomUUID().toString().substring(0, 8);
    final ConsumerSettings settings = Settings.withLedger(Settings.defaults(consumer, KeyStrategy.CONTENT), true);
    /** The positions each handler call was given, in call order. */
    final List<List<Integer>> calls = new CopyOnWriteArrayList<>();

    GuardEngine engine(ClaimStore claimStore, Ledger l) {
        return new GuardEngine(claimStore, transactions, l, scheduler, listener, new KeyDeriver("oo:"));
    }

    /** A handler writing one business row per message it is given; it throws when given a position in {@code poison}. */
    BatchWork<String> handler(GuardEngine engine, List<Integer> poison, List<RecordingDispatch> batch) {
        return handler(poison, batch, Poison::new);
    }

    /** As above, throwing what {@code failure} makes: an exception or an error. */
    BatchWork<String> handler(List<Integer> poison, List<RecordingDispatch> batch, Supplier<? extends Throwable> failure) {
        return positions -> {
            calls.add(List.copyOf(positions));
            for (int p : positions) {
                em.persist(new ProcessedMessage(businessKey(batch.get(p)) + ":" + UUID.randomUUID(), consumer,
                        "0".repeat(64), Instant.now()));
            }
            em.flush();
            if (positions.stream().anyMatch(poison::contains)) {
                Throwable t = failure.get();
                if (t instanceof Error e) {
                    throw e;
                }
                throw (Exception) t;
            }
            return "ran";
        };
    }

    static final class Poison extends RuntimeException {
        Poison() {
            super("poison message");
        }
    }

    static List<Outcome> outcomesOf(List<? extends Decision<?>> decisions) {
        return decisions.stream().map(Decision::outcome).toList();
    }

    List<RecordingDispatch> dispatches(String... bodies) {
        List<RecordingDispatch> all = new ArrayList<>();
        for (String b : bodies) {
            all.add(dispatch(b));
        }
        return all;
    }

    RecordingDispatch dispatch(String body) {
        return new RecordingDispatch(MessageView.of("orders", "order.placed", null, Map.of(),
                (consumer + ":" + body).getBytes(StandardCharsets.UTF_8)), true);
    }

    MessageKey keyOf(Dispatch d) {
        return new KeyDeriver("oo:").derive(settings, d.message(), null);
    }

    String businessKey(Dispatch d) {
        return "business:" + new String(d.message().body(), StandardCharsets.UTF_8);
    }

    /** How many business rows the message's handler runs committed. */
    long businessRows(Dispatch d) {
        return jta.call(() -> em.createQuery("select count(p) from ProcessedMessage p where p.msgId like :k", Long.class)
                .setParameter("k", businessKey(d) + ":%").getSingleResult());
    }

    static Optional<ProcessedMessage> ledgerRow(String key) {
        return Optional.ofNullable(jta.call(() -> em.find(ProcessedMessage.class, key)));
    }

    ClaimState claimState(MessageKey key) {
        ClaimState state = store.claim(key.storeKey(), "probe", key.fingerprint(), Duration.ofSeconds(1)).state();
        if (state == ClaimState.ACQUIRED) {
            store.release(key.storeKey(), "probe");
        }
        return state;
    }

    static void awaitFinished(GuardEngine engine) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (engine.inFlight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(0, engine.inFlight(), "every guarded call finished, its done marker written");
    }

    /** The in-memory store's batches (a loop), counting claim round trips and extends; {@link #down} fails every call. */
    static final class CountingStore implements BatchClaimStore {
        final AtomicInteger claimBatches = new AtomicInteger();
        final AtomicInteger singleClaims = new AtomicInteger();
        final AtomicInteger completeBatches = new AtomicInteger();
        final AtomicInteger singleCompletes = new AtomicInteger();
        final AtomicInteger extends_ = new AtomicInteger();
        volatile boolean down;
        volatile boolean failCompleteAll;
        /** The batch of completions is applied, then its reply lost. */
        volatile boolean failCompleteAllAfterApplying;
        private final BatchClaimStore inner;

        CountingStore(ClaimStore store) {
            this.inner = BatchClaimStore.inProcess(store);
        }

        private void check() {
            if (down) {
                throw new ClaimStoreException("counting", "any", new java.io.IOException("connection refused"));
            }
        }

        @Override
        public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
            check();
            claimBatches.incrementAndGet();
            return inner.claimAll(requests);
        }

        @Override
        public List<HolderResult> completeAll(List<CompleteRequest> requests) {
            check();
            completeBatches.incrementAndGet();
            if (failCompleteAll) {
                throw new ClaimStoreException("counting", "completeAll", new java.io.IOException("connection reset"));
            }
            List<HolderResult> results = inner.completeAll(requests);
            if (failCompleteAllAfterApplying) {
                throw new ClaimStoreException("counting", "completeAll", new java.io.IOException("reply lost"));
            }
            return results;
        }

        @Override
        public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
            check();
            if (!claims.isEmpty()) {
                claimBatches.incrementAndGet();
            }
            return inner.completeThenClaim(completions, claims);
        }

        @Override
        public boolean completesWithClaims() {
            return true;
        }

        @Override
        public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
            check();
            if (!"probe".equals(token)) {
                singleClaims.incrementAndGet();
            }
            return inner.claim(key, token, fingerprint, lease);
        }

        @Override
        public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
            check();
            singleCompletes.incrementAndGet();
            return inner.complete(key, token, fingerprint, retention);
        }

        @Override
        public HolderResult release(String key, String token) {
            check();
            return inner.release(key, token);
        }

        @Override
        public HolderResult extend(String key, String token, Duration lease) {
            check();
            extends_.incrementAndGet();
            return inner.extend(key, token, lease);
        }

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public Optional<String> problem() {
            return Optional.empty();
        }

        @Override
        public void close() {
        }
    }
}
