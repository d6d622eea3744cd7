package dev.onceonly.simulation;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * One instance's connection to the shared claim store, injecting the faults of a store across a
 * network: every call takes a round trip (the world moves meanwhile), and may time out before the
 * store saw it or after it acted (a lost reply), or wait for a store frozen longer than a lease.
 * Wraps any {@link ClaimStore}; the simulation uses the real {@code InMemoryClaimStore} on the
 * virtual clock, whose contract {@code ClaimStoreContract} checks like Redis's.
 */
final class SimStore implements ClaimStore {

    /** Chances per call: a timeout before the store acted, a reply lost after, a freeze of {@code freeze}. */
    record Faults(double failBefore, double lostReply, double freeze, Duration freezeFor) {
        static final Faults NONE = new Faults(0, 0, 0, Duration.ZERO);
    }

    private final Supplier<ClaimStore> shared;
    private final SimLoop loop;
    private final SimLoop.Owner owner;
    private final Faults faults;
    private final boolean batches;
    private final java.util.Set<String> keysSeen;
    /** Told the keys of every call a fault hit: without a ledger, their messages may run again (README's window). */
    private final java.util.function.Consumer<List<String>> faulted;

    /**
     * @param shared  the store all instances share (a supplier: a wipe replaces it)
     * @param batches whether the store sends completions with claims (as Redis and the in-memory store do)
     * @param keysSeen where every key claimed is noted, for the checks at the end of a run
     */
    SimStore(Supplier<ClaimStore> shared, SimLoop loop, SimLoop.Owner owner, Faults faults, boolean batches,
             java.util.Set<String> keysSeen, java.util.function.Consumer<List<String>> faulted) {
        this.keysSeen = keysSeen;
        this.faulted = faulted;
        this.shared = shared;
        this.loop = loop;
        this.owner = owner;
        this.faults = faults;
        this.batches = batches;
    }

    private <T> T call(String op, List<String> keys, Supplier<T> body) {
        Trace trace = loop.trace;
        if (trace.fault(loop.chance(faults.freeze()), "store frozen " + faults.freezeFor().toMillis() + " ms under " + owner + " " + op)) {
            faulted.accept(keys);
            loop.pause(owner, faults.freezeFor().toNanos());
        }
        if (trace.fault(loop.chance(faults.failBefore()), "store call " + op + " of " + owner + " times out unseen")) {
            faulted.accept(keys);
            loop.roundTrip(owner, 2_000);
            throw new ClaimStoreException("sim", op, new java.net.SocketTimeoutException("simulated"));
        }
        boolean actFirst = loop.random.nextBoolean();
        T result = null;
        if (actFirst) {
            result = body.get();
        }
        loop.roundTrip(owner, 1_500);
        if (!actFirst) {
            result = body.get();
        }
        if (trace.fault(loop.chance(faults.lostReply()), "reply to " + op + " of " + owner + " lost")) {
            faulted.accept(keys);
            throw new ClaimStoreException("sim", op, new java.net.SocketTimeoutException("simulated, after the store acted"));
        }
        return result;
    }

    @Override
    public ClaimResult claim(String key, String token, String fingerprint, Duration lease) {
        keysSeen.add(key);
        return call("claim", List.of(key), () -> shared.get().claim(key, token, fingerprint, lease));
    }

    @Override
    public HolderResult complete(String key, String token, String fingerprint, Duration retention) {
        return call("complete", List.of(key), () -> shared.get().complete(key, token, fingerprint, retention));
    }

    @Override
    public HolderResult release(String key, String token) {
        return call("release", List.of(key), () -> shared.get().release(key, token));
    }

    @Override
    public HolderResult extend(String key, String token, Duration lease) {
        return call("extend", List.of(key), () -> shared.get().extend(key, token, lease));
    }

    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
        requests.forEach(r -> keysSeen.add(r.key()));
        return call("claimAll", requests.stream().map(ClaimRequest::key).toList(), () -> shared.get().claimAll(requests));
    }

    @Override
    public List<HolderResult> completeAll(List<CompleteRequest> requests) {
        return call("completeAll", requests.stream().map(CompleteRequest::key).toList(), () -> shared.get().completeAll(requests));
    }

    @Override
    public Answers completeThenClaim(List<CompleteRequest> completions, List<ClaimRequest> claims) {
        claims.forEach(r -> keysSeen.add(r.key()));
        return call("completeThenClaim", java.util.stream.Stream.concat(completions.stream().map(CompleteRequest::key), claims.stream().map(ClaimRequest::key)).toList(), () -> shared.get().completeThenClaim(completions, claims));
    }

    @Override
    public boolean completesWithClaims() {
        return batches;
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
