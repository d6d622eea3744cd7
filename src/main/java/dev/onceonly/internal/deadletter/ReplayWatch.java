package dev.onceonly.internal.deadletter;

import dev.onceonly.api.ReplayResult;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The guard's decisions on replays, as this instance's connector settles them: a replay waits here
 * for the decision on the copy it published. A decision nobody waits for (a replay started on
 * another instance) is dropped; the connector's log line reports it either way.
 */
public final class ReplayWatch {

    private final Map<String, CompletableFuture<ReplayResult>> waiting = new ConcurrentHashMap<>();

    /**
     * Registers a wait for the decision on the replay of {@code id}; made before the replay is
     * published, so a decision that comes at once is not missed.
     *
     * @param id the dead letter's id
     * @return completed by {@link #settled}
     */
    CompletableFuture<ReplayResult> expect(String id) {
        return waiting.computeIfAbsent(id, i -> new CompletableFuture<>());
    }

    /** Stops waiting for {@code id}. */
    void forget(String id) {
        waiting.remove(id);
    }

    /**
     * The connector settled a replay: hands the decision to whoever waits for it.
     *
     * @param replayOf the id of the dead letter it replays
     * @param status   the guard's decision
     * @param detail   the reason, never a body or key
     */
    public void settled(String replayOf, ReplayResult.Status status, String detail) {
        CompletableFuture<ReplayResult> f = waiting.remove(replayOf);
        if (f != null) {
            f.complete(new ReplayResult(replayOf, status, detail));
        }
    }
}
