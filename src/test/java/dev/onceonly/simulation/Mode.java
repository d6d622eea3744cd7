package dev.onceonly.simulation;

import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.testing.Settings;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One combination of the modes a user can choose, with the chances of the faults the simulation
 * injects in it. {@link #all()} is every combination the simulation covers.
 *
 * @param guarded      whether the consumer method is guarded at all (an unguarded one still goes
 *                     through the connector, with claim-ahead if configured)
 * @param ledger       the ledger on
 * @param claimAhead   the channel's {@code claim-ahead} (0: off)
 * @param storeFailure what the guard does when the claim store fails
 * @param quorum       a quorum queue instead of a classic one
 * @param brokerDelay  failed deliveries wait in delay queues ({@code retry-broker-delay-above})
 * @param store        which claim store the instances share
 * @param outbox       the handler sends messages through the transactional outbox, and each instance relays
 * @param jmsDeliveries 0: the RabbitMQ connector; else a JMS message-driven bean instead
 *                     ({@link SimJms}), whose queue gives up after this many deliveries
 *                     ({@code maxRedeliveryCount}); claim-ahead, queue type and delay queues do not apply
 * @param batch        0: one delivery per call; else the channel's {@code batch-size}, the consumer
 *                     method taking a list ({@code batch=true}, without claim-ahead)
 */
record Mode(boolean guarded, boolean ledger, int claimAhead, StoreFailurePolicy storeFailure, boolean quorum,
            boolean brokerDelay, Store store, boolean outbox, int jmsDeliveries, int batch) {

    /** The claim stores users run: the simulation's memory store, the database's table, and Redis's failure semantics. */
    enum Store { MEMORY, DATABASE, REDIS_LIKE }

    /** Liberty's messaging engine: a queue's {@code maxRedeliveryCount} when not set. */
    static final int LIBERTY_MAX_REDELIVERY_COUNT = 5;

    static final Duration LEASE = Duration.ofMillis(400);
    static final int PREFETCH = 6;
    /** The batch modes' {@code batch-size}: within {@link #PREFETCH}, so that held retries leave room for partial batches too. */
    static final int BATCH = 4;
    /** The channel's {@code max-attempts}: a failing message's attempts before it is dead-lettered. */
    static final int MAX_ATTEMPTS = 4;

    /**
     * Every combination: ledger × claim-ahead × store-failure × queue type × delay queues on the
     * memory store, and unguarded channels; the other stores with what meets the store (ledger,
     * claim-ahead's batches, store-failure) on a classic queue, which keeps the seeds per mode up;
     * with the outbox (memory store), ledger × store-failure, each once classic without claim-ahead
     * and once quorum with it (the outbox is the handler's and the relay's: the channel's options
     * matter less); and JMS listeners (memory store): ledger × store-failure × redelivery limit
     * (Liberty's default, and a low one that makes every held round count).
     */
    static List<Mode> all() {
        List<Mode> modes = new ArrayList<>();
        for (boolean ledger : new boolean[] {true, false}) {
            for (int ahead : new int[] {0, 4}) {
                for (StoreFailurePolicy policy : StoreFailurePolicy.values()) {
                    if (policy == StoreFailurePolicy.LEDGER_ONLY && !ledger) {
                        continue; // without a ledger the engine applies REJECT
                    }
                    for (boolean quorum : new boolean[] {false, true}) {
                        for (boolean delay : new boolean[] {false, true}) {
                            modes.add(new Mode(true, ledger, ahead, policy, quorum, delay, Store.MEMORY, false, 0, 0));
                        }
                    }
                    for (Store store : new Store[] {Store.DATABASE, Store.REDIS_LIKE}) {
                        modes.add(new Mode(true, ledger, ahead, policy, false, false, store, false, 0, 0));
                    }
                }
            }
            for (StoreFailurePolicy policy : StoreFailurePolicy.values()) {
                if (policy != StoreFailurePolicy.LEDGER_ONLY || ledger) {
                    modes.add(new Mode(true, ledger, 0, policy, false, false, Store.MEMORY, true, 0, 0));
                    modes.add(new Mode(true, ledger, 4, policy, true, false, Store.MEMORY, true, 0, 0));
                }
            }
        }
        // Batches: ledger × store-failure, on a classic queue (and a quorum one) with the memory store,
        // and on the Redis-like store; an unguarded batch consumer besides.
        for (boolean ledger : new boolean[] {true, false}) {
            for (StoreFailurePolicy policy : StoreFailurePolicy.values()) {
                if (policy == StoreFailurePolicy.LEDGER_ONLY && !ledger) {
                    continue;
                }
                modes.add(new Mode(true, ledger, 0, policy, false, false, Store.MEMORY, false, 0, BATCH));
                modes.add(new Mode(true, ledger, 0, policy, true, false, Store.MEMORY, false, 0, BATCH));
                modes.add(new Mode(true, ledger, 0, policy, false, false, Store.REDIS_LIKE, false, 0, BATCH));
            }
        }
        modes.add(new Mode(false, false, 0, StoreFailurePolicy.REJECT, false, false, Store.MEMORY, false, 0, BATCH));
        for (boolean quorum : new boolean[] {false, true}) {
            modes.add(new Mode(false, false, 4, StoreFailurePolicy.REJECT, quorum, false, Store.MEMORY, false, 0, 0));
        }
        for (boolean ledger : new boolean[] {true, false}) {
            for (StoreFailurePolicy policy : StoreFailurePolicy.values()) {
                if (policy == StoreFailurePolicy.LEDGER_ONLY && !ledger) {
                    continue;
                }
                for (int limit : new int[] {LIBERTY_MAX_REDELIVERY_COUNT, 2}) {
                    modes.add(new Mode(true, ledger, 0, policy, false, false, Store.MEMORY, false, limit, 0));
                }
            }
        }
        return modes;
    }

    /** How many times a batch consumer without the ledger is in {@link #schedule()} (see {@link #weight()}). */
    static final int BATCH_WITHOUT_LEDGER_WEIGHT = 8;
    /** How many times a single-message consumer without the ledger on the database or Redis-like store is in it. */
    static final int STORE_WITHOUT_LEDGER_WEIGHT = 2;
    /** How many times a JMS listener with the ledger and a low {@code maxRedeliveryCount} (2) is in it. */
    static final int JMS_LEDGER_LOW_LIMIT_WEIGHT = 16;

    /**
     * How often this mode runs among the seeds, against 1 for most: the modes whose windows are rare
     * and whose failures the ledger does not catch run more often. A batch without the ledger relies
     * on the pre-commit check of every claim in it ({@code BatchCall.mayCommit}), which only matters
     * when a claim is lost during the batch's run (a store call frozen past the lease, a fail-over or
     * restart of the Redis-like store) while a copy of its message arrives; the database and
     * Redis-like stores without the ledger carry the fences and done marks nothing else catches. A JMS
     * listener with the ledger and a low redelivery limit is where one extra {@code BUSY} round (a
     * ledger duplicate's done mark deferred to the transaction's end) spends the provider's last
     * redelivery: about one run in 500 of these modes opens that window.
     */
    int weight() {
        if (batchWithoutLedger()) {
            return BATCH_WITHOUT_LEDGER_WEIGHT;
        }
        if (ledger && jmsDeliveries > 0 && jmsDeliveries < LIBERTY_MAX_REDELIVERY_COUNT) {
            return JMS_LEDGER_LOW_LIMIT_WEIGHT;
        }
        return guarded && !ledger && batch == 0 && jmsDeliveries == 0 && store != Store.MEMORY ? STORE_WITHOUT_LEDGER_WEIGHT : 1;
    }

    /**
     * A guarded batch consumer without the ledger: its pre-commit check is all that stops a second
     * effect once a claim of the batch was lost, so its seeds run more often ({@link #weight()}) and
     * its claims are lost more often ({@link #storeFaults()}: the Redis-like store's fail-overs are not
     * raised, as three times as many let a fail-over lose a claim after the pre-commit check with
     * its done mark's take-again timing out, a window the simulation does not yet attribute).
     */
    boolean batchWithoutLedger() {
        return guarded && !ledger && batch > 0;
    }

    /**
     * The order seeds run the modes in: seed {@code n} runs {@code schedule().get(n mod size)}. Every
     * mode once, in {@link #all()}'s order, then a round of each mode of {@linkplain #weight() weight}
     * 2 or more, then of 3 or more, and so on; so one seed always runs one mode (a seed replays its
     * run), and the first {@code all().size()} slots hold every mode.
     */
    static List<Mode> schedule() {
        List<Mode> all = all();
        List<Mode> schedule = new ArrayList<>(all);
        for (int round = 2; ; round++) {
            int before = schedule.size();
            for (Mode m : all) {
                if (m.weight() >= round) {
                    schedule.add(m);
                }
            }
            if (schedule.size() == before) {
                return List.copyOf(schedule);
            }
        }
    }

    /**
     * Whether the handler's results are kept ({@code result.keep}, {@link SimResults}): with the
     * ledger, and beside the Redis-like store's claims (the database store keeps none beside its
     * claims, as in the library); single-message RabbitMQ consumers, with the other stores.
     */
    boolean results() {
        return guarded && batch == 0 && jmsDeliveries == 0 && !outbox && store != Store.MEMORY
                && (ledger || store == Store.REDIS_LIKE);
    }

    ConsumerSettings consumerSettings() {
        ConsumerSettings s = Settings.defaults("sim", KeyStrategy.MESSAGE_ID);
        s = Settings.withLedger(s, ledger);
        s = Settings.withStoreFailure(s, storeFailure);
        s = Settings.withLease(s, LEASE);
        if (jmsDeliveries > 0) {
            // A JMSMessageID is new for every send: the key is a property the producer sets.
            s = Settings.withKey(s, KeyStrategy.HEADER, false, SimJms.KEY);
        }
        return Settings.withRetry(s, List.of(), List.of(SimInstance.PoisonException.class));
    }

    /** The signing keys of a rotation by rolling restart (the three steps docs/configuration.md gives for copy-signing-previous-keys; the simulation takes the first two). */
    static final String OLD_KEY = "simulation-copy-signing-key-0123";
    static final String NEW_KEY = "simulation-copy-signing-key-rotated";

    /**
     * The channel's attributes on an instance at step {@code rotation} of the signing key's rotation:
     * 0 before it, 1 accepting the new key, 2 signing with it and accepting the old one.
     */
    Map<String, String> channelAttributes(int rotation) {
        Map<String, String> a = new HashMap<>();
        a.put("channel-name", "sim");
        a.put("queue.name", World.QUEUE);
        a.put("queue.type", quorum ? "quorum" : "classic");
        a.put("exchange.name", World.EXCHANGE);
        a.put("prefetch", Integer.toString(PREFETCH));
        a.put("claim-ahead", Integer.toString(claimAhead));
        if (batch > 0) {
            a.put("batch", "true");
            a.put("batch-size", Integer.toString(batch));
            a.put("batch-linger", "5ms");
        }
        a.put("max-attempts", Integer.toString(MAX_ATTEMPTS));
        a.put("retry-delay", retryDelay().toMillis() + "ms");
        a.put("retry-max-delay", brokerDelay ? "4s" : "120ms");
        a.put("retry-broker-delay-above", "1s");
        a.put("confirm-timeout", "300ms");
        a.put("network-recovery-interval", "200ms");
        a.put("copy-signing-key", rotation >= 2 ? NEW_KEY : OLD_KEY);
        if (rotation > 0) {
            a.put("copy-signing-previous-keys", rotation >= 2 ? OLD_KEY : NEW_KEY);
        }
        // The simulation waits for a stopping channel's drain on its own clock (SimInstance#stop):
        // the channel's wait, in real time, only has to end.
        a.put("drain-timeout", "1ms");
        return a;
    }

    /** The channel's {@code retry-delay}: how long a BUSY or RETRY delivery is held before it goes back. */
    Duration retryDelay() {
        return Duration.ofMillis(brokerDelay ? 1_000 : 30);
    }

    /** How many messages the consumer asks for at first (Reactive Messaging's buffer). */
    int requests() {
        return claimAhead > 0 ? PREFETCH : 1;
    }

    /** The store's network faults per call; a frozen call (two leases) is what loses a running batch's claims, more often where only the pre-commit check guards them. */
    SimStore.Faults storeFaults() {
        return new SimStore.Faults(0.01, 0.01, batchWithoutLedger() ? 0.012 : 0.003, LEASE.multipliedBy(2));
    }

    SimDatabase.Faults databaseFaults() {
        return new SimDatabase.Faults(0.02, 0.01, 0.01);
    }

    SimAmqp.Faults brokerFaults() {
        return new SimAmqp.Faults(0.02, 0.01, 0.01);
    }

    /** Redis-like store: a fail-over to a replica that lost the last {@code replicaLag} (at most) of writes, and a restart without persistence, per tick. */
    RedisLikeStore.Faults redisFaults() {
        return new RedisLikeStore.Faults(0.003, Duration.ofMillis(400), 0.001);
    }

    /** A relay transaction stops waiting for its confirms early (a stalled thread, a short timeout), per relay. */
    double relayEarlyStopChance() {
        return 0.02;
    }

    /**
     * A handler's pause past its lease (half of them stopping the whole instance); four times as often on
     * the database and Redis-like stores without the ledger, where only the store's holder checks keep a
     * late holder's effect out: a claim lost in a pause must meet a copy whose holder still runs.
     */
    double pauseChance() {
        return guarded && !ledger && batch == 0 && jmsDeliveries == 0 && store != Store.MEMORY ? 0.04 : 0.01;
    }

    double failChance() {
        return 0.05;
    }

    double crashChance() {
        return 0.002;
    }

    /** A whole instance paused (a stop-the-world collection, a frozen VM) for 1.5 to 3 leases, a tick. */
    double freezeChance() {
        return 0.0005;
    }

    /** A graceful stop (a rolling restart), per instance and tick. */
    double stopChance() {
        return 0.002;
    }

    /** How long a stopping instance waits for its deliveries in progress ({@code drain-timeout}). */
    static final Duration DRAIN = Duration.ofMillis(300);

    @Override
    public String toString() {
        if (jmsDeliveries > 0) {
            return "jms maxRedeliveryCount=" + jmsDeliveries + (ledger ? " ledger" : " no-ledger") + " store-failure="
                    + storeFailure.name().toLowerCase().replace('_', '-');
        }
        return (guarded ? "" : "unguarded ") + (ledger ? "ledger" : "no-ledger") + (claimAhead > 0 ? " claim-ahead" : "")
                + " store-failure=" + storeFailure.name().toLowerCase().replace('_', '-') + (quorum ? " quorum" : " classic")
                + (brokerDelay ? " delay-queues" : "") + (store == Store.MEMORY ? "" : " store=" + store.name().toLowerCase().replace('_', '-'))
                + (outbox ? " outbox" : "") + (batch > 0 ? " batch=" + batch : "") + (results() ? " results" : "");
    }
}
