package dev.onceonly.simulation;

import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;

import dev.onceonly.spi.ClaimState;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * One instance's connection to the shared claim store, injecting the faults of a store across a
 * network: every call takes a round trip (the world moves meanwhile), and may time out before the
 * store saw it or after it acted (a lost reply), or wait for a store frozen longer than a lease.
 * Wraps any {@link ClaimStore}; the simulation uses the real {@code InMemoryClaimStore} on the
 * virtual clock, whose contract {@code ClaimStoreContract} checks like Redis's. A batch is one round
 * trip, as Redis pipelines it, over the wrapped store's batches ({@link BatchClaimStore#of}).
 */
final class SimStore implements BatchClaimStore {

    /** Chances per call: a timeout before the store acted, a reply lost after, a freeze of {@code freeze}. */
    record Faults(double failBefore, double lostReply, double freeze, Duration freezeFor) {
        static final Faults NONE = new Faults(0, 0, 0, Duration.ZERO);
    }

    static final String FAULT = "the claim store failed or froze on its done mark";
    static final String LATE_MARK = "more than a lease passed between the pre-commit check and the done mark";

    private final Supplier<ClaimStore> shared;
    private final SimLoop loop;
    private final SimLoop.Owner owner;
    private final Faults faults;
    private final Set<String> keysSeen;
    /**
     * Keys of every call a fault hit, a claim's too: a claim the store took but whose answer was lost
     * is held until its lease ends, and a copy meanwhile is {@code BUSY} (JMS counts that round).
     */
    private final Set<String> faultedKeys = new java.util.HashSet<>();
    /**
     * Told the keys of every done mark a fault hit, and of every done mark that landed after the lease
     * its pre-commit check confirmed: without a ledger, their messages may run again (docs/guarantees.md's
     * windows), with why.
     */
    private final BiConsumer<List<String>, String> faulted;
    /** Keys of the transaction whose pre-commit check is running ({@link #checking}). */
    private Set<String> checking = Set.of();
    /** Per claim token, when the lease its pre-commit check confirmed runs out (virtual nanoseconds). */
    private final Map<String, Long> checkedUntil = new HashMap<>();
    /** Tokens whose done mark found their claim lost, until they take their key again ({@link #marked}). */
    private final Set<String> retaking = new java.util.HashSet<>();

    /**
     * @param shared  the store all instances share (a supplier: a wipe replaces it)
     * @param keysSeen where every key claimed is noted, for the checks at the end of a run
     */
    SimStore(Supplier<ClaimStore> shared, SimLoop loop, SimLoop.Owner owner, Faults faults,
             Set<String> keysSeen, BiConsumer<List<String>, String> faulted) {
        this.keysSeen = keysSeen;
        this.faulted = faulted;
        this.shared = shared;
        this.loop = loop;
        this.owner = owner;
        this.faults = faults;
    }

    /**
     * The engine's pre-commit check (without a ledger) for a transaction writing {@code keys} is
     * about to run: a claim or renewal of one of them now is that check, and the lease it confirms
     * must outlast the done mark, else a copy may run again (docs/guarantees.md: a pause, or a store slow on the
     * mark, for longer than the lease between that check and the mark). Checks nest: another
     * transaction of this instance may commit during this check's round trip.
     *
     * @return the keys of the check this one runs inside, for {@link #checked}
     */
    Set<String> checking(Set<String> keys) {
        Set<String> outer = checking;
        checking = keys;
        return outer;
    }

    /** The check is over: the one it ran inside goes on. */
    void checked(Set<String> outer) {
        checking = outer;
    }

    private void confirmed(String key, String token, boolean held, Duration lease) {
        if (held && checking.contains(key)) {
            checkedUntil.put(token, loop.now() + lease.toNanos());
        }
    }

    /**
     * Whether {@code token}'s holder passed its pre-commit check and has not acted on the claim since:
     * it commits, or has committed, and its done mark is still to come.
     */
    boolean confirmedUnmarked(String token) {
        return checkedUntil.containsKey(token);
    }

    /** The done mark of {@code token}'s claim acts now: late if the lease its pre-commit check confirmed ran out. */
    private void marking(String key, String token) {
        Long until = checkedUntil.get(token);
        if (until != null && loop.now() - until > 0) {
            faulted.accept(List.of(key), LATE_MARK);
        }
    }

    /**
     * The store answered {@code token}'s done mark. Applied, its window closes. Not applied (the store
     * lost the claim), the holder takes the key again ({@link #claim}) and marks it then: until that
     * re-take it is still between its check and its mark, and a copy that claims the key meanwhile
     * runs beside its commit (the window docs/guarantees.md names for a claim lost after the check). The re-take is the
     * holder's very next call ({@link #nextCall}): any other call of this instance first closes the
     * window, so that a holder that does not take its key again is not excused.
     */
    private HolderResult marked(String token, HolderResult r) {
        if (r == HolderResult.APPLIED) {
            checkedUntil.remove(token);
        } else if (checkedUntil.containsKey(token)) {
            retaking.add(token);
        }
        return r;
    }

    /** A call of this instance with {@code token} (or none) begins: a re-take still awaited that this is not will not come. */
    private void nextCall(String token) {
        if (!retaking.isEmpty()) {
            for (java.util.Iterator<String> i = retaking.iterator(); i.hasNext(); ) {
                String awaited = i.next();
                if (!awaited.equals(token)) {
                    i.remove();
                    checkedUntil.remove(awaited);
                }
            }
        }
    }

    /** The holder's re-take after a refused mark: unless it took the key, nothing of it is left to mark. */
    private ClaimResult retook(String token, ClaimResult r) {
        if (retaking.remove(token) && r.state() != ClaimState.ACQUIRED) {
            checkedUntil.remove(token);
        }
        return r;
    }

    /** {@code -Dsim.storeCalls=true}: every call the store acted on, in the trace (for a replay). */
    private static final boolean TRACE_CALLS = Boolean.getBoolean("sim.storeCalls");

    /** {@return the keys of every call a fault hit} */
    Set<String> faultedKeys() {
        return faultedKeys;
    }

    private void traceCall(String op, List<String> keys, Object result) {
        if (TRACE_CALLS) {
            loop.trace.event(owner + " store " + op + " " + keys + " -> " + result);
        }
    }

    /**
     * @param marks the keys whose done marks the call writes: a fault on it opens the window docs/guarantees.md names for
     *              them (the store failing or freezing on the mark); on any other call the engine's
     *              fencing and pre-commit check must hold, so a fault there opens none
     */
    private <T> T call(String op, List<String> keys, List<String> marks, Supplier<T> body) {
        Trace trace = loop.trace;
        if (trace.fault(loop.chance(faults.freeze()), "store frozen " + faults.freezeFor().toMillis() + " ms under " + owner + " " + op)) {
            faultedKeys.addAll(keys);
            faulted.accept(marks, FAULT);
            loop.pause(owner, faults.freezeFor().toNanos());
        }
        if (trace.fault(loop.chance(faults.failBefore()), "store call " + op + " of " + owner + " times out unseen")) {
            faultedKeys.addAll(keys);
            faulted.accept(marks, FAULT);
            loop.roundTrip(owner, 2_000);
            throw new ClaimStoreException("sim", op, new java.net.SocketTimeoutException("simulated"));
        }
        boolean actFirst = loop.random.nextBoolean();
        T result = null;
        if (actFirst) {
            result = body.get();
            traceCall(op, keys, result);
        }
        loop.roundTrip(owner, 1_500);
        if (!actFirst) {
            result = body.get();
            traceCall(op, keys, result);
        }
        if (trace.fault(loop.chance(faults.lostReply()), "reply to " + op + " of " + owner + " lost")) {
            faultedKeys.addAll(keys);
            faulted.accept(marks, FAULT);
            throw new ClaimStoreException("sim", op, new java.net.SocketTimeoutException("simulated, after the store acted"));
        }
        return result;
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        nextCall(token);
        keysSeen.add(key);
        return call("claim", List.of(key), List.of(), () -> {
            ClaimResult r = shared.get().claim(key, token, fingerprint, lease);
            confirmed(key, token, r.state() == ClaimState.ACQUIRED, lease);
            return retook(token, r);
        });
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        nextCall(token);
        return call("complete", List.of(key), List.of(key), () -> {
            marking(key, token);
            return marked(token, shared.get().complete(key, token, fingerprint, retention));
        });
    }

    @Override
    public HolderResult release(String key, String token) {
        nextCall(token);
        return call("release", List.of(key), List.of(), () -> {
            checkedUntil.remove(token); // rolled back after its check: nothing of it to mark
            return shared.get().release(key, token);
        });
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        nextCall(token);
        return call("extend", List.of(key), List.of(), () -> {
            HolderResult r = shared.get().extend(key, token, lease);
            confirmed(key, token, r == HolderResult.APPLIED, lease);
            return r;
        });
    }

    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
        nextCall(null);
        requests.forEach(r -> keysSeen.add(r.key()));
        return call("claimAll", requests.stream().map(ClaimRequest::key).toList(), List.of(), () -> BatchClaimStore.of(shared.get()).claimAll(requests));
    }

    @Override
    public List<HolderResult> completeAll(List<CompleteRequest> requests) {
        nextCall(null);
        List<String> keys = requests.stream().map(CompleteRequest::key).toList();
        return call("completeAll", keys, keys, () -> {
            requests.forEach(r -> marking(r.key(), r.token()));
            List<HolderResult> results = BatchClaimStore.of(shared.get()).completeAll(requests);
            for (int i = 0; i < results.size(); i++) {
                marked(requests.get(i).token(), results.get(i));
            }
            return results;
        });
    }

    @Override
    public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        nextCall(null);
        claims.forEach(r -> keysSeen.add(r.key()));
        List<String> marks = completions.stream().map(CompleteRequest::key).toList();
        return call("completeThenClaim", java.util.stream.Stream.concat(marks.stream(), claims.stream().map(ClaimRequest::key)).toList(), marks, () -> {
            completions.forEach(r -> marking(r.key(), r.token()));
            Answers answers = BatchClaimStore.of(shared.get()).completeThenClaim(completions, claims);
            for (int i = 0; i < completions.size(); i++) {
                marked(completions.get(i).token(), answers.completions().get(i));
            }
            return answers;
        });
    }

    /** As the wrapped store's batches: the database's do not, so the engine's un-batched path runs there. */
    @Override
    public boolean completesWithClaims() {
        return BatchClaimStore.of(shared.get()).completesWithClaims();
    }

    @Override
    public String name() {
        return "sim";
    }

    @Override
    public Optional<String> problem() {
        return Optional.empty();
    }

    @Override
    public void close() {
        // the shared store outlives the instance
    }
}
